package io.hetgpu.extender.model;

/** The {@code hetgpu.io/priority} annotation, for clusters without PriorityClasses. */
public enum PriorityHint {
    UNSET, HIGH, NORMAL, LOW
}
