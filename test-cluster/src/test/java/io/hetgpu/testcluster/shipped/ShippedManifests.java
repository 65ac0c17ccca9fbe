package io.hetgpu.testcluster.shipped;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Every Kubernetes object in the checkout's {@code manifests/} files (kustomization files left out). */
final class ShippedManifests {

    private ShippedManifests() {
    }

    static List<HasMetadata> load() {
        var serialization = new KubernetesSerialization();
        var yaml = new YAMLMapper();
        var objects = new ArrayList<HasMetadata>();
        try (Stream<Path> files = Files.walk(ShippedArtifacts.checkout().resolve("manifests"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (JsonNode document : yaml.readValues(yaml.createParser(file.toFile()), JsonNode.class).readAll()) {
                    if (document.isObject() && !document.path("kind").asText().matches("Kustomization|Component")
                            && serialization.unmarshal(document.toString()) instanceof HasMetadata object) {
                        objects.add(object);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return objects;
    }
}
