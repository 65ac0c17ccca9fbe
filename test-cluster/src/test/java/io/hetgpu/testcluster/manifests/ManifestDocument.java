package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;

import java.nio.file.Path;

/** One YAML document of a manifest file: where it came from, its raw tree, and the typed object. */
record ManifestDocument(Path file, int position, JsonNode source, HasMetadata object) {

    /** "device-plugin.yaml#3 DaemonSet/hetgpu-device-plugin", for assertion messages. */
    String describe() {
        return file + "#" + position + " " + object.getKind() + "/" + object.getMetadata().getName();
    }
}
