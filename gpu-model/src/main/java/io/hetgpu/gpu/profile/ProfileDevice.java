package io.hetgpu.gpu.profile;

import io.hetgpu.gpu.ComputeCapability;
import java.util.Objects;

/**
 * One GPU of a machine profile: what the driver would report for it, less the UUID, which each
 * simulated node derives from its own name (see {@link MachineProfile#topology(String)}).
 *
 * @param numaNode the NUMA node, or {@link io.hetgpu.gpu.GpuDevice#NUMA_UNKNOWN}
 */
public record ProfileDevice(String product, long memoryMiB, ComputeCapability computeCapability, String pciBusId, int numaNode) {

    public ProfileDevice {
        Objects.requireNonNull(product, "product");
        Objects.requireNonNull(computeCapability, "computeCapability");
        Objects.requireNonNull(pciBusId, "pciBusId");
    }
}
