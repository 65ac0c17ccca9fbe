package io.hetgpu.extender.policy;

/**
 * Where {@code spec.priority} stops being neutral: at or above {@code high} a pod prefers the newest
 * tier, at or below {@code low} the oldest tier that fits. The default low of 0 sends pods without a
 * PriorityClass to older cards, keeping the newest free for work that asked for them.
 */
public record PriorityThresholds(int high, int low) {

    public static final PriorityThresholds DEFAULTS = new PriorityThresholds(1000, 0);

    public PriorityThresholds {
        if (low >= high) {
            throw new IllegalArgumentException("the low priority threshold (" + low + ") must be below the high one (" + high + ")");
        }
    }
}
