package io.hetgpu.gpu;

import java.util.Objects;

/**
 * One GPU as NVML (or a simulated profile) describes it.
 *
 * @param uuid              NVML's UUID, {@code GPU-…}; also the device ID kubelet knows it by
 * @param index             NVML's index on this node (0-based)
 * @param product           the product name as the driver reports it, e.g. {@code Tesla V100-SXM2-16GB}
 * @param model             the normalised card model, e.g. {@code V100} (see {@link CardModel})
 * @param family            architecture generation
 * @param computeCapability CUDA compute capability
 * @param memoryMiB         total device memory in MiB
 * @param pciBusId          PCI bus ID, {@code 0000:07:00.0}
 * @param numaNode          the NUMA node the device hangs off, or {@link #NUMA_UNKNOWN}
 * @param health            whether the device may be handed out
 */
public record GpuDevice(
        String uuid,
        int index,
        String product,
        String model,
        GpuArchitecture family,
        ComputeCapability computeCapability,
        long memoryMiB,
        String pciBusId,
        int numaNode,
        DeviceHealth health) {

    /** Single-socket machines and some drivers report no NUMA affinity. */
    public static final int NUMA_UNKNOWN = -1;

    public GpuDevice {
        requireText(uuid, "uuid");
        requireText(product, "product");
        requireText(model, "model");
        requireText(pciBusId, "pciBusId");
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(computeCapability, "computeCapability");
        Objects.requireNonNull(health, "health");
        if (index < 0) {
            throw new IllegalArgumentException("index must be >= 0, got " + index);
        }
        if (memoryMiB <= 0) {
            throw new IllegalArgumentException("memoryMiB must be > 0, got " + memoryMiB);
        }
        if (numaNode < NUMA_UNKNOWN) {
            throw new IllegalArgumentException("numaNode must be >= 0 or -1 (unknown), got " + numaNode);
        }
    }

    public GpuDevice withHealth(DeviceHealth newHealth) {
        return newHealth == health ? this
                : new GpuDevice(uuid, index, product, model, family, computeCapability, memoryMiB, pciBusId, numaNode, newHealth);
    }

    public boolean isHealthy() {
        return health == DeviceHealth.HEALTHY;
    }

    public boolean hasNumaNode() {
        return numaNode != NUMA_UNKNOWN;
    }

    private static void requireText(String value, String field) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be empty");
        }
    }
}
