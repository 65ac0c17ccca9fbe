package io.hetgpu.extender.policy;

/**
 * Where {@code spec.priority} stops being neutral: at or above {@code high} a pod prefers the newest
 * tier, at or below {@code low} the oldest tier that fits. By default a pod without a PriorityClass
 * (priority 0, Kubernetes' default) is neutral and only negative priorities count as low: treating
 * every unclassified pod as low priority pushed ordinary work onto the oldest cards and, in the
 * simulator, lengthened the mean job completion time by a third.
 */
public record PriorityThresholds(int high, int low) {

    public static final PriorityThresholds DEFAULTS = new PriorityThresholds(1000, -1);

    public PriorityThresholds {
        if (low >= high) {
            throw new IllegalArgumentException("the low priority threshold (" + low + ") must be below the high one (" + high + ")");
        }
    }
}
