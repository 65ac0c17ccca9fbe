package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.gpu.inventory.DeviceAssignment;
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

    /** The pod's holding on the node it is bound to; its record's devices only where {@code trust} trusts the record. */
    public static BoundPod of(Pod pod, PodRequestParser parser, RecordTrust trust) {
        int gpus = gpuCount(pod, parser);
        var metadata = pod.getMetadata();
        var annotations = metadata.getAnnotations();
        boolean nvlink = annotations != null && "nvlink".equalsIgnoreCase(annotations.getOrDefault(HetgpuKeys.POD_INTERCONNECT, "").strip());
        return new BoundPod(uidOf(pod), gpus, nvlink, boundAt(pod), assignedDevices(pod, gpus, trust), priorityOf(pod));
    }

    /** The GPUs the pod's request asks: 0 for a request that cannot be read (its own verbs say why). */
    static int gpuCount(Pod pod, PodRequestParser parser) {
        try {
            return parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            return 0;
        }
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
    public static Optional<Placed> placed(Pod pod, PodRequestParser parser, RecordTrust trust) {
        if (holdsResources(pod)) {
            var bound = of(pod, parser, trust);
            if (bound.gpuCount() > 0) {
                return Optional.of(new Placed(pod.getSpec().getNodeName(), bound));
            }
        }
        return binding(pod, parser, trust);
    }

    /**
     * A pod not bound yet that carries a readable {@code hetgpu.io/gpu-devices} record {@code trust} trusts: a bind in
     * flight to the record's node, whichever extender runs it, or one that ended without removing its record (then the
     * record is old, and the node state ignores it: {@link BoundPod#freshBinding}). Empty for any other pod.
     */
    public static Optional<Placed> binding(Pod pod, PodRequestParser parser, RecordTrust trust) {
        if (!waitsForNode(pod)) {
            return Optional.empty();
        }
        var record = record(pod);
        if (record.isEmpty()) {
            return Optional.empty();
        }
        int gpus = gpuCount(pod, parser);
        var assignment = record.get();
        if (!trust.trusts(pod, uidOf(pod), assignment, gpus)) {
            return Optional.empty();
        }
        return Optional.of(new Placed(assignment.node(),
                BoundPod.binding(uidOf(pod), gpus, assignment.devices(), assignment.boundAt(), priorityOf(pod))));
    }

    /**
     * Where a bind in flight seen before is to be removed from: the node the record of a pod not bound to any node names,
     * trusted or not (an untrusted one was never added), even when the pod is being deleted or has ended.
     */
    public static Optional<String> recordedNodeUnbound(Pod pod) {
        var node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        return node == null || node.isEmpty() ? record(pod).map(DeviceAssignment::node) : Optional.empty();
    }

    /** The pod's readable record naming a node and devices, or empty. */
    private static Optional<DeviceAssignment> record(Pod pod) {
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
            return Optional.of(assignment);
        } catch (InventoryFormatException e) {
            LOG.debug("pod {}/{}: {} ignored: {}", metadata.getNamespace(), metadata.getName(), HetgpuKeys.POD_GPU_DEVICES, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The devices the bind verb assigned the pod on the node it is bound to, or none: a record {@code trust} does not
     * trust (one naming another node is stale: a bind that failed and was retried elsewhere; one a pod's author wrote is
     * no record of hetgpu's), and one that cannot be read is no record at all, so for these the pod's holding is predicted
     * as for a pod bound without the handshake.
     */
    static List<String> assignedDevices(Pod pod, int gpus, RecordTrust trust) {
        return record(pod).filter(assignment -> trust.trusts(pod, uidOf(pod), assignment, gpus)).map(DeviceAssignment::devices).orElse(List.of());
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
