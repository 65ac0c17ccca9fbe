package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** Reads the GPU holding of a pod bound to a node. */
public final class BoundPods {

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
        return new BoundPod(metadata.getUid() == null ? metadata.getName() : metadata.getUid(), gpus, nvlink, boundAt(pod));
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
