package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The manifests/ folder as kubectl would read it: every YAML document of every file parsed into a
 * typed fabric8 object, plus the kustomization files as plain trees (kustomize is not available
 * here, so the tests check what kustomize would be given).
 */
final class ManifestTree {

    /** Tests run in the module's folder; the manifests sit beside it. */
    static final Path ROOT = Path.of("..", "manifests");
    static final Path SIMULATED_OVERLAY = ROOT.resolve("overlays/simulated");
    static final Path SAMPLES = ROOT.resolve("samples");
    static final Path IMAGES_COMPONENT = ROOT.resolve("images");
    static final String KUSTOMIZATION = "kustomization.yaml";

    private static final YAMLMapper YAML = new YAMLMapper();

    private final List<ManifestDocument> documents;

    private ManifestTree(List<ManifestDocument> documents) {
        this.documents = List.copyOf(documents);
    }

    static ManifestTree load() {
        var serialization = new KubernetesSerialization();
        var documents = new ArrayList<ManifestDocument>();
        for (Path file : yamlFiles()) {
            int position = 0;
            for (JsonNode source : readDocuments(file)) {
                KubernetesResource parsed = serialization.unmarshal(source.toString());
                if (!(parsed instanceof HasMetadata object)) {
                    throw new AssertionError(file + "#" + position + " is not a Kubernetes object: " + parsed);
                }
                documents.add(new ManifestDocument(file, position++, source, object));
            }
        }
        return new ManifestTree(documents);
    }

    /** Every manifest file (kustomization files excluded), sorted for stable messages. */
    static List<Path> yamlFiles() {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().endsWith(".yaml"))
                    .filter(f -> !f.getFileName().toString().equals(KUSTOMIZATION))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<JsonNode> readDocuments(Path file) {
        try (var parser = YAML.createParser(file.toFile())) {
            return YAML.readValues(parser, JsonNode.class).readAll().stream()
                    .filter(node -> node != null && !node.isNull() && !node.isMissingNode())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    static JsonNode kustomization(Path folder) {
        return readDocuments(folder.resolve(KUSTOMIZATION)).getFirst();
    }

    static JsonNode yaml(String text) {
        try {
            return YAML.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    List<ManifestDocument> documents() {
        return documents;
    }

    /** The documents of the files the base kustomization lists. */
    List<ManifestDocument> base() {
        var listed = new ArrayList<Path>();
        kustomization(ROOT).path("resources").forEach(r -> listed.add(ROOT.resolve(r.asText()).normalize()));
        return documents.stream().filter(d -> listed.contains(d.file().normalize())).toList();
    }

    List<ManifestDocument> in(Path folder) {
        return documents.stream().filter(d -> d.file().startsWith(folder)).toList();
    }

    <T extends HasMetadata> List<T> all(List<ManifestDocument> documents, Class<T> type) {
        return documents.stream().map(ManifestDocument::object).filter(type::isInstance).map(type::cast).toList();
    }

    <T extends HasMetadata> T baseObject(Class<T> type, String name) {
        return all(base(), type).stream()
                .filter(o -> o.getMetadata().getName().equals(name))
                .reduce((a, b) -> {
                    throw new AssertionError("two " + type.getSimpleName() + " named " + name);
                })
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " named " + name + " in the base"));
    }

    /**
     * Paths of the fields in {@code source} that the typed object does not know: fabric8 keeps those in
     * additionalProperties instead of failing, while kubectl (strict field validation) rejects them.
     */
    static List<String> unknownFields(ManifestDocument document) {
        var unknown = new ArrayList<String>();
        try {
            JsonNode typed = KNOWN_FIELDS_ONLY.readTree(KNOWN_FIELDS_SERIALIZATION.asJson(document.object()));
            collectUnknown(document.source(), typed, "", unknown);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return unknown;
    }

    private static void collectUnknown(JsonNode source, JsonNode typed, String path, List<String> unknown) {
        if (source.isObject()) {
            source.properties().forEach(field -> {
                JsonNode value = field.getValue();
                JsonNode counterpart = typed.path(field.getKey());
                String at = path + "." + field.getKey();
                if (counterpart.isMissingNode()) {
                    // Empty values may be left out on the way back out; they carry no field names.
                    if (!(value.isNull() || (value.isContainerNode() && value.isEmpty()))) {
                        unknown.add(at);
                    }
                } else {
                    collectUnknown(value, counterpart, at, unknown);
                }
            });
        } else if (source.isArray() && typed.isArray() && source.size() == typed.size()) {
            for (int i = 0; i < source.size(); i++) {
                collectUnknown(source.get(i), typed.get(i), path + "[" + i + "]", unknown);
            }
        }
    }

    /** Serialises fabric8 objects without their additionalProperties, i.e. with known fields only. */
    private static final ObjectMapper KNOWN_FIELDS_ONLY = new ObjectMapper()
            .setAnnotationIntrospector(new JacksonAnnotationIntrospector() {
                @Override
                public Boolean hasAnyGetter(Annotated annotated) {
                    return Boolean.FALSE;
                }
            });
    private static final KubernetesSerialization KNOWN_FIELDS_SERIALIZATION =
            new KubernetesSerialization(KNOWN_FIELDS_ONLY, true);
}
