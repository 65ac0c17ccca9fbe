package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PodRequest;

/** Which tier a pod should prefer: the gpu-preference annotation, else the priority annotation, else spec.priority. */
public final class TierPreference {

    private TierPreference() {
    }

    public static GpuPreference of(PodRequest pod, PriorityThresholds thresholds) {
        if (pod.preference() != GpuPreference.UNSET) {
            return pod.preference();
        }
        return switch (pod.priorityHint()) {
            case HIGH -> GpuPreference.NEWEST;
            case LOW -> GpuPreference.OLDEST;
            case NORMAL -> GpuPreference.ANY;
            case UNSET -> pod.specPriority() >= thresholds.high() ? GpuPreference.NEWEST
                    : pod.specPriority() <= thresholds.low() ? GpuPreference.OLDEST
                    : GpuPreference.ANY;
        };
    }

    /**
     * Whether the pod counts as high priority: the priority annotation where given, else spec.priority at or
     * above the high threshold. A gpu-preference annotation changes which cards a pod likes, not its priority.
     */
    public static boolean isHighPriority(PodRequest pod, PriorityThresholds thresholds) {
        return priorityLevel(pod, thresholds).equals("high");
    }

    /** The pod's priority as the policy reads it, for metrics: high, low, or normal (tier-neutral). */
    public static String priorityLevel(PodRequest pod, PriorityThresholds thresholds) {
        return switch (pod.priorityHint()) {
            case HIGH -> "high";
            case LOW -> "low";
            case NORMAL -> "normal";
            case UNSET -> pod.specPriority() >= thresholds.high() ? "high" : pod.specPriority() <= thresholds.low() ? "low" : "normal";
        };
    }
}
