package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.hetgpu.gpu.cli.ParseErrors;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The objects given with {@code -f}: every document of every file ({@code -} for standard input), a {@code kind: List}'s
 * items each on its own, each with where it came from for a message that names it.
 */
record WorkloadFiles(List<Given> objects) {

    WorkloadFiles {
        objects = List.copyOf(objects);
    }

    /** One object and where it was read: "job.yaml, document 2". */
    record Given(String source, HasMetadata object) {
    }

    /** A file that cannot be read as Kubernetes objects: one line naming the file, the document and the field. */
    static final class BadInput extends Exception {
        BadInput(String message) {
            super(message);
        }
    }

    /** The most bytes read of one file: far more than any workload's YAML, few enough to hold in memory. */
    static final int MAX_BYTES = 16 * 1024 * 1024;

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final KubernetesSerialization KUBERNETES = new KubernetesSerialization();

    static WorkloadFiles read(List<String> names, InputStream stdin) throws BadInput {
        var objects = new ArrayList<Given>();
        for (var name : names) {
            var file = name.equals("-") ? "standard input" : name;
            String text;
            try (var in = name.equals("-") ? null : Files.newInputStream(Path.of(name))) {
                text = text(file, name.equals("-") ? stdin : in);
            } catch (NoSuchFileException e) {
                throw new BadInput(name + ": no such file");
            } catch (IOException | java.io.UncheckedIOException e) {
                throw new BadInput(name + ": cannot be read: " + e.getMessage());
            }
            List<JsonNode> documents;
            try {
                documents = YAML.readValues(YAML.createParser(text), JsonNode.class).readAll();
            } catch (JsonProcessingException e) {
                var where = ParseErrors.location(e);
                throw new BadInput(file + ": not YAML: " + ParseErrors.sentences(e) + (where.isEmpty() ? "" : " (" + where + ")"));
            } catch (IOException e) {
                throw new BadInput(file + ": not YAML: " + e.getMessage());
            }
            for (int d = 0; d < documents.size(); d++) {
                var source = file + (documents.size() == 1 ? "" : ", document " + (d + 1));
                add(objects, source, documents.get(d));
            }
        }
        return new WorkloadFiles(objects);
    }

    /**
     * The text of a file, read no further than {@link #MAX_BYTES}: a file that never ends ({@code /dev/zero}) or a
     * gigabyte of YAML is refused, not read until the heap is full.
     */
    private static String text(String file, InputStream in) throws IOException, BadInput {
        var bytes = in.readNBytes(MAX_BYTES + 1);
        if (bytes.length > MAX_BYTES) {
            throw new BadInput(file + ": more than " + MAX_BYTES / (1024 * 1024) + " MiB, more than the workload files explain reads");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BadInput(file + ": not UTF-8 text");
        }
    }

    private static void add(List<Given> objects, String source, JsonNode document) throws BadInput {
        if (document == null || document.isNull() || document.isMissingNode() || document.isObject() && document.isEmpty()) {
            return;
        }
        if (!document.isObject()) {
            throw new BadInput(source + ": expected a Kubernetes object (apiVersion, kind, metadata), got " + document.getNodeType().name().toLowerCase());
        }
        var kind = document.path("kind").asText("");
        if (kind.isEmpty()) {
            throw new BadInput(source + ": kind: missing");
        }
        if (document.path("apiVersion").asText("").isEmpty()) {
            throw new BadInput(source + ": apiVersion: missing (kind " + kind + ")");
        }
        if (kind.equals("List")) {
            var items = document.path("items");
            for (int i = 0; i < items.size(); i++) {
                add(objects, source + ", items[" + i + "]", items.get(i));
            }
            return;
        }
        if (document.path("metadata").path("name").asText("").isEmpty()) {
            throw new BadInput(source + ": metadata.name: missing (" + kind + ")");
        }
        ResourceAmounts.check(source + ": " + kind + " " + document.path("metadata").path("name").asText(), document);
        try {
            objects.add(new Given(source, KUBERNETES.unmarshal(JSON.writeValueAsString(document))));
        } catch (RuntimeException | JsonProcessingException e) {
            var message = e.getCause() instanceof JsonProcessingException json ? json.getOriginalMessage()
                    : e.getMessage() == null ? e.toString() : e.getMessage();
            throw new BadInput(source + ": cannot be read as a " + kind + ": " + message.lines().findFirst().orElse(""));
        }
    }
}
