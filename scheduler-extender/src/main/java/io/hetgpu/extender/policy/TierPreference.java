package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PodRequest;

/** Which tier a pod should prefer: the gpu-preference annotation, else its priority level ({@link PriorityThresholds#levelOf}). */
public final class TierPreference {

    private TierPreference() {
    }

    public static GpuPreference of(PodRequest pod, PriorityThresholds thresholds) {
        if (pod.preference() != GpuPreference.UNSET) {
            return pod.preference();
        }
        return switch (thresholds.levelOf(pod)) {
            case HIGH -> GpuPreference.NEWEST;
            case LOW -> GpuPreference.OLDEST;
            case NORMAL, UNSET -> GpuPreference.ANY;
        };
    }

    /**
     * Whether the pod counts as high priority: its level, from the priority annotation where that counts, else
     * spec.priority. A gpu-preference annotation changes which cards a pod likes, not its priority.
     */
    public static boolean isHighPriority(PodRequest pod, PriorityThresholds thresholds) {
        return priorityLevel(pod, thresholds).equals("high");
    }

    /** The pod's priority as the policy reads it, for metrics: high, low, or normal (tier-neutral). */
    public static String priorityLevel(PodRequest pod, PriorityThresholds thresholds) {
        return switch (thresholds.levelOf(pod)) {
            case HIGH -> "high";
            case LOW -> "low";
            case NORMAL, UNSET -> "normal";
        };
    }
}
