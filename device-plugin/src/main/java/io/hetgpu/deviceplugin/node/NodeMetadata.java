package io.hetgpu.deviceplugin.node;

import java.util.Map;

/** A Node's labels and annotations: what it has, or what the plugin wants of its own keys. */
public record NodeMetadata(Map<String, String> labels, Map<String, String> annotations) {

    public NodeMetadata {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    }
}
