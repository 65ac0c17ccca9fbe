package io.hetgpu.nvml;

import io.hetgpu.gpu.PcieRelation;

/** NVML's {@code nvmlGpuTopologyLevel_t}: the closest common PCIe ancestor of two GPUs. */
public enum NvmlTopologyLevel {
    INTERNAL(0, PcieRelation.SAME_BOARD),
    SINGLE(10, PcieRelation.SINGLE_SWITCH),
    MULTIPLE(20, PcieRelation.MULTIPLE_SWITCHES),
    HOSTBRIDGE(30, PcieRelation.HOST_BRIDGE),
    NODE(40, PcieRelation.SAME_NUMA_NODE),
    SYSTEM(50, PcieRelation.ACROSS_SOCKETS);

    private final int nvmlValue;
    private final PcieRelation relation;

    NvmlTopologyLevel(int nvmlValue, PcieRelation relation) {
        this.nvmlValue = nvmlValue;
        this.relation = relation;
    }

    public PcieRelation relation() {
        return relation;
    }

    /** Maps NVML's value; throws {@link IllegalArgumentException} quoting it for a value this build does not know. */
    public static NvmlTopologyLevel of(int nvmlValue) {
        for (var level : values()) {
            if (level.nvmlValue == nvmlValue) {
                return level;
            }
        }
        throw new IllegalArgumentException("unknown NVML topology level " + nvmlValue);
    }
}
