package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads the GPU holding of a pod bound to a node, or of one being bound (its record written, its Binding not yet seen). */
public final class BoundPods {

    private static final Logger LOG = LoggerFactory.getLogger(BoundPods.class);
    private static final DeviceAssignmentCodec ASSIGNMENTS = new DeviceAssignmentCodec();

    private BoundPods() {
    }

    /** Whether the pod still holds what it was given: bound, and neither succeeded nor failed. */
    public static boolean holdsResources(Pod pod) {
        if (pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
            return false;
        }
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return !"Succeeded".equals(phase) && !"Failed".equals(phase);
    }

    /** A pod kube-scheduler has still to place: no node yet, not finished, not being deleted. */
    public static boolean waitsForNode(Pod pod) {
        if (pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()) {
            return false;
        }
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return !"Succeeded".equals(phase) && !"Failed".equals(phase) && pod.getMetadata().getDeletionTimestamp() == null;
    }

    public static BoundPod of(Pod pod, PodRequestParser parser) {
        int gpus;
        try {
            gpus = parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            gpus = 0;
        }
        var metadata = pod.getMetadata();
        var annotations = metadata.getAnnotations();
        boolean nvlink = annotations != null && "nvlink".equalsIgnoreCase(annotations.getOrDefault(HetgpuKeys.POD_INTERCONNECT, "").strip());
        return new BoundPod(uidOf(pod), gpus, nvlink, boundAt(pod), assignedDevices(pod), priorityOf(pod));
    }

    /** The key a pod's holding is kept under: its UID, or its name where a pod has none (requests built by hand). */
    static String uidOf(Pod pod) {
        var metadata = pod.getMetadata();
        return metadata.getUid() == null ? metadata.getName() : metadata.getUid();
    }

    private static int priorityOf(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getPriority() == null ? 0 : pod.getSpec().getPriority();
    }

    /** A pod's holding where the view keeps it: the node it is bound to, or the node its bind in flight recorded. */
    public record Placed(String node, BoundPod holding) {
    }

    /**
     * Where a cluster view keeps the pod's GPU holding, if anywhere: the node it is bound to while it holds GPUs there, else
     * the node its bind in flight recorded ({@link #binding}). Empty for a pod that holds no GPU anywhere.
     */
    public static Optional<Placed> placed(Pod pod, PodRequestParser parser) {
        if (holdsResources(pod)) {
            var bound = of(pod, parser);
            if (bound.gpuCount() > 0) {
                return Optional.of(new Placed(pod.getSpec().getNodeName(), bound));
            }
        }
        return binding(pod);
    }

    /**
     * A pod not bound yet that carries a readable {@code hetgpu.io/gpu-devices} record: a bind in flight to the record's
     * node, whichever extender runs it, or one that ended without removing its record (then the record is old, and the
     * node state ignores it: {@link BoundPod#freshBinding}). Empty for any other pod.
     */
    public static Optional<Placed> binding(Pod pod) {
        return waitsForNode(pod) ? recorded(pod) : Optional.empty();
    }

    /**
     * The record of a pod not bound to any node, read as {@link #binding} reads it, even when the pod is being deleted or
     * has ended: where a bind in flight seen before is to be removed from.
     */
    public static Optional<Placed> recordedUnbound(Pod pod) {
        var node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        return node == null || node.isEmpty() ? recorded(pod) : Optional.empty();
    }

    private static Optional<Placed> recorded(Pod pod) {
        var metadata = pod.getMetadata();
        var annotations = metadata.getAnnotations();
        var text = annotations == null ? null : annotations.get(HetgpuKeys.POD_GPU_DEVICES);
        if (text == null) {
            return Optional.empty();
        }
        try {
            var assignment = ASSIGNMENTS.decode(text);
            if (assignment.node().isEmpty() || assignment.devices().isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new Placed(assignment.node(),
                    BoundPod.binding(uidOf(pod), assignment.devices(), assignment.boundAt(), priorityOf(pod))));
        } catch (InventoryFormatException e) {
            LOG.debug("pod {}/{}: {} ignored: {}", metadata.getNamespace(), metadata.getName(), HetgpuKeys.POD_GPU_DEVICES, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The devices the bind verb assigned the pod on the node it is bound to, or none: an annotation naming another
     * node is stale (a bind that failed and was retried elsewhere), and one that cannot be read is no record at all,
     * so for both the pod's holding is predicted as for a pod bound without the handshake.
     */
    static List<String> assignedDevices(Pod pod) {
        var annotations = pod.getMetadata().getAnnotations();
        var text = annotations == null ? null : annotations.get(HetgpuKeys.POD_GPU_DEVICES);
        if (text == null) {
            return List.of();
        }
        try {
            var assignment = ASSIGNMENTS.decode(text);
            return assignment.node().equals(pod.getSpec().getNodeName()) ? assignment.devices() : List.of();
        } catch (InventoryFormatException e) {
            LOG.debug("pod {}/{}: {} ignored: {}", pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                    HetgpuKeys.POD_GPU_DEVICES, e.getMessage());
            return List.of();
        }
    }

    /** When the scheduler bound the pod: its PodScheduled condition, else its creation. */
    static Instant boundAt(Pod pod) {
        if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
            for (var condition : pod.getStatus().getConditions()) {
                if ("PodScheduled".equals(condition.getType()) && "True".equals(condition.getStatus())) {
                    var time = parse(condition.getLastTransitionTime());
                    if (time != null) {
                        return time;
                    }
                }
            }
        }
        var created = parse(pod.getMetadata().getCreationTimestamp());
        return created == null ? Instant.EPOCH : created;
    }

    private static Instant parse(String text) {
        if (text == null) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
