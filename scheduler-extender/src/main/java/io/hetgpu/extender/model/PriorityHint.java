package io.hetgpu.extender.model;

/** The {@code hetgpu.io/priority} annotation, for clusters without PriorityClasses; also a pod's priority level. */
public enum PriorityHint {
    UNSET, HIGH, NORMAL, LOW;

    /** Whether this asks for more than {@code level}: high above normal above low; {@link #UNSET} asks for nothing. */
    public boolean raises(PriorityHint level) {
        return height() > level.height();
    }

    private int height() {
        return switch (this) {
            case HIGH -> 2;
            case NORMAL -> 1;
            case LOW -> 0;
            case UNSET -> -1;
        };
    }
}
