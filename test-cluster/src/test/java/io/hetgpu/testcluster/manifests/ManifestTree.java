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
 * The files in manifests/, each YAML document parsed into a typed fabric8 object, for what rendering
 * cannot show: kubectl kustomize passes unknown fields through unchecked, and the samples are applied
 * with {@code kubectl apply -f}, not through a kustomization. What a kustomization deploys comes from
 * {@link Kubectl#kustomize}.
 */
final class ManifestTree {

    /** Tests run in the module's folder; the manifests sit beside it. */
    static final Path ROOT = Path.of("..", "manifests");
    static final Path BASE = ROOT.resolve(io.hetgpu.testcluster.cluster.DeployedConfiguration.BASE);
    static final Path SIMULATED_OVERLAY = ROOT.resolve("overlays/simulated");
    static final Path SAMPLES = ROOT.resolve("samples");
    static final Path IMAGES_COMPONENT = ROOT.resolve("images");
    /** hetgpu as a DRA driver: the install with the components below (DraInstallTest checks it). */
    static final Path DRA_OVERLAY = ROOT.resolve("overlays/dra");
    static final Path DRA_COMPONENT = ROOT.resolve("components/dra");
    static final Path DRA_MUTATION_COMPONENT = ROOT.resolve("components/dra-priority-mutation");
    /** Applied in each tenant namespace, not in an install. */
    static final Path DRA_CLAIM_TEMPLATES = ROOT.resolve("components/dra-claim-templates");
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
        return files().stream().filter(f -> !f.getFileName().toString().equals(KUSTOMIZATION)).toList();
    }

    /** Every folder of manifests/ that holds a kustomization (a Kustomization or a Component). */
    static List<Path> kustomizations() {
        return files().stream().filter(f -> f.getFileName().toString().equals(KUSTOMIZATION)).map(Path::getParent).toList();
    }

    private static List<Path> files() {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<JsonNode> readDocuments(Path file) {
        try {
            return readDocuments(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    static List<JsonNode> readDocuments(String text) {
        try (var parser = YAML.createParser(text)) {
            return YAML.readValues(parser, JsonNode.class).readAll().stream()
                    .filter(node -> node != null && !node.isNull() && !node.isMissingNode())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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

    List<ManifestDocument> in(Path folder) {
        return documents.stream().filter(d -> d.file().startsWith(folder)).toList();
    }

    static <T extends HasMetadata> List<T> all(List<ManifestDocument> documents, Class<T> type) {
        return documents.stream().map(ManifestDocument::object).filter(type::isInstance).map(type::cast).toList();
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
