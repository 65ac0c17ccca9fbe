package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.Node;
import io.hetgpu.gpu.inventory.HetgpuKeys;
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
 * @param gpuAllocatable  {@code status.allocatable} of the GPU resource as written, or null when the node has none:
 *                        what a node not served by hetgpu's device plugin offers
 * @param takesNewPods    neither cordoned nor tainted {@code NoSchedule}/{@code NoExecute} (but for the GPU resource's
 *                        own taint, which GPU pods tolerate): a node preemption may free GPUs on for a new pod. A node
 *                        kube-scheduler may still admit a tolerating pod to counts as not, which errs towards a pod
 *                        taking the cards it can have now
 * @param slices          the GPUs DRA drivers publish for the node in ResourceSlices ({@link NodeSlices#NONE} when none do, or
 *                        the cluster serves no {@code resource.k8s.io/v1}): kept apart from the Node's resourceVersion,
 *                        which a slice's change does not move, and the same object until the node's slices change
 */
public record NodeFacts(String name, String resourceVersion, Map<String, String> labels, String inventory, String free,
                        String gpuAllocatable, boolean takesNewPods, NodeSlices slices) {

    public NodeFacts {
        Objects.requireNonNull(name, "name");
        resourceVersion = resourceVersion == null ? "" : resourceVersion;
        labels = labels == null ? Map.of() : labels;
        slices = slices == null ? NodeSlices.NONE : slices;
    }

    /** A node no ResourceSlice publishes GPUs for. */
    public NodeFacts(String name, String resourceVersion, Map<String, String> labels, String inventory, String free,
                     String gpuAllocatable, boolean takesNewPods) {
        this(name, resourceVersion, labels, inventory, free, gpuAllocatable, takesNewPods, NodeSlices.NONE);
    }

    /** These facts with the node's GPUs as its ResourceSlices publish them. */
    public NodeFacts withSlices(NodeSlices newSlices) {
        return new NodeFacts(name, resourceVersion, labels, inventory, free, gpuAllocatable, takesNewPods, newSlices);
    }

    /** A node as a request's node list gives it: kube-scheduler sends only nodes that passed its own filters. */
    public NodeFacts(String name, String resourceVersion, Map<String, String> labels, String inventory, String free,
                     String gpuAllocatable) {
        this(name, resourceVersion, labels, inventory, free, gpuAllocatable, true);
    }

    /** A node whose allocatable GPU count is not looked at (it has hetgpu's inventory, or no GPUs). */
    public NodeFacts(String name, String resourceVersion, Map<String, String> labels, String inventory, String free) {
        this(name, resourceVersion, labels, inventory, free, null);
    }

    public static NodeFacts of(Node node) {
        return of(node, HetgpuKeys.DEFAULT_RESOURCE_NAME);
    }

    /** The facts of a Node, reading the allocatable count of {@code gpuResource}. */
    public static NodeFacts of(Node node, String gpuResource) {
        var metadata = node.getMetadata();
        var annotations = metadata.getAnnotations() == null ? Map.<String, String>of() : metadata.getAnnotations();
        var allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null ? null
                : node.getStatus().getAllocatable().get(gpuResource);
        return new NodeFacts(metadata.getName(), metadata.getResourceVersion(), metadata.getLabels(),
                annotations.get(HetgpuKeys.ANNOTATION_INVENTORY), annotations.get(HetgpuKeys.ANNOTATION_FREE),
                allocatable == null ? null : allocatable.toString(), takesNewPods(node, gpuResource));
    }

    private static boolean takesNewPods(Node node, String gpuResource) {
        var spec = node.getSpec();
        if (spec == null) {
            return true;
        }
        if (Boolean.TRUE.equals(spec.getUnschedulable())) {
            return false;
        }
        if (spec.getTaints() != null) {
            for (var taint : spec.getTaints()) {
                if (taint != null && ("NoSchedule".equals(taint.getEffect()) || "NoExecute".equals(taint.getEffect()))
                        && !gpuResource.equals(taint.getKey())) {
                    return false;
                }
            }
        }
        return true;
    }
}
