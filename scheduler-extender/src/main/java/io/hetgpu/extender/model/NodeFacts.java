package io.hetgpu.extender.model;

import java.util.Map;
import java.util.Objects;

/**
 * The few parts of a Node object the extender reads: taken from an informer's Node or streamed out
 * of a request's node list without building the whole object.
 *
 * @param name            metadata.name
 * @param resourceVersion metadata.resourceVersion ("" when absent)
 * @param labels          metadata.labels
 * @param inventory       the {@code hetgpu.io/gpu-inventory} annotation, or null when the node has none
 * @param free            the {@code hetgpu.io/gpu-free} annotation, or null when the node has none
 */
public record NodeFacts(String name, String resourceVersion, Map<String, String> labels, String inventory, String free) {

    public NodeFacts {
        Objects.requireNonNull(name, "name");
        resourceVersion = resourceVersion == null ? "" : resourceVersion;
        labels = labels == null ? Map.of() : labels;
    }

    public static NodeFacts of(io.fabric8.kubernetes.api.model.Node node) {
        var metadata = node.getMetadata();
        var annotations = metadata.getAnnotations() == null ? Map.<String, String>of() : metadata.getAnnotations();
        return new NodeFacts(metadata.getName(), metadata.getResourceVersion(), metadata.getLabels(),
                annotations.get(io.hetgpu.gpu.inventory.HetgpuKeys.ANNOTATION_INVENTORY),
                annotations.get(io.hetgpu.gpu.inventory.HetgpuKeys.ANNOTATION_FREE));
    }
}
