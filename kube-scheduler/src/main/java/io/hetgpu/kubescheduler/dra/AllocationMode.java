package io.hetgpu.kubescheduler.dra;

/** {@code allocationMode} of a request: a count of devices, or every matching device reachable from the node. */
public enum AllocationMode {
    EXACT_COUNT,
    ALL
}
