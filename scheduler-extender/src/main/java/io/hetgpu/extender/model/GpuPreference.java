package io.hetgpu.extender.model;

/** Which card tier a pod should prefer: the {@code hetgpu.io/gpu-preference} annotation, or what its priority implies. */
public enum GpuPreference {
    /** No annotation: the pod's priority decides. */
    UNSET,
    NEWEST,
    OLDEST,
    ANY
}
