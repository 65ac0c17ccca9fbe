package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequestParser;
import java.util.HashMap;
import java.util.Map;

/**
 * The pods in no job that wait for a node and need GPUs, counted by how many they need: the smaller work a job headroom
 * lets through (a pod of several GPUs waits for room only while pods of fewer wait for as much). Each pod is counted
 * once, by its UID, as it is now; a sum takes at most {@link PodRequestParser#MAX_GPUS_PER_POD} steps, whatever the
 * number of pods.
 */
final class WaitingPods {

    private final PodRequestParser parser;
    private final Map<String, Integer> gpusByUid = new HashMap<>();
    private final int[] bySize = new int[PodRequestParser.MAX_GPUS_PER_POD + 1];

    WaitingPods(PodRequestParser parser) {
        this.parser = parser;
    }

    /** Counts the pod as it is now: waiting, or no longer (bound, ended, deleted, in a job, or needing no GPU). */
    synchronized void seen(Pod pod) {
        var uid = BoundPods.uidOf(pod);
        forget(uid);
        int gpus = waitingFor(pod);
        if (gpus > 0) {
            gpusByUid.put(uid, gpus);
            bySize[gpus]++;
        }
    }

    synchronized void gone(Pod pod) {
        forget(BoundPods.uidOf(pod));
    }

    /** The GPUs the waiting pods of fewer than {@code gpus} GPUs need, together. */
    synchronized int gpusBelow(int gpus) {
        int needed = 0;
        for (int size = 1; size < Math.min(gpus, bySize.length); size++) {
            needed += size * bySize[size];
        }
        return needed;
    }

    private void forget(String uid) {
        var gpus = gpusByUid.remove(uid);
        if (gpus != null) {
            bySize[gpus]--;
        }
    }

    /** The GPUs the pod waits for, or 0 when it is bound, ended, being deleted, in a job, or unreadable. */
    private int waitingFor(Pod pod) {
        var spec = pod.getSpec();
        if (spec == null || (spec.getNodeName() != null && !spec.getNodeName().isEmpty())
                || (pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null)) {
            return 0;
        }
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase) || JobMembershipReader.keyOf(pod).isPresent()) {
            return 0;
        }
        try {
            return parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            // Refused by the filter whatever it waits for: no work the room could let through.
            return 0;
        }
    }
}
