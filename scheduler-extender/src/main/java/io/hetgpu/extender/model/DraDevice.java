package io.hetgpu.extender.model;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuDevice;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One whole GPU a DRA driver publishes in a node's ResourceSlices, as {@link SliceReader} read it.
 *
 * @param driver            the driver that publishes it ({@code gpu.nvidia.com})
 * @param pool              its pool's name (NVIDIA's driver names the pool after the node)
 * @param name              its name in the pool ({@code gpu-0})
 * @param product           the product name as published, cut to {@link SliceReader#MAX_VALUE_CHARS}
 * @param model             the card model as hetgpu spells it ({@code A100})
 * @param memoryMiB         its memory capacity
 * @param computeCapability its CUDA compute capability
 * @param tier              the tier the driver published for it, 0 when it published none
 * @param nvlinkSets        by set size, the NVLink set it belongs to; a size it is in no set of is absent (empty when
 *                          the driver publishes no NVLink)
 * @param numaNode          its NUMA node, {@link GpuDevice#NUMA_UNKNOWN} when not published
 * @param pcieRoot          its PCIe root complex, "" when not published
 * @param untainted         no taint keeps kube-scheduler from allocating it (NoSchedule, NoExecute)
 */
public record DraDevice(String driver, String pool, String name, String product, String model, long memoryMiB,
                        ComputeCapability computeCapability, int tier, Map<Integer, String> nvlinkSets, int numaNode, String pcieRoot,
                        boolean untainted) {

    public DraDevice {
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(name, "name");
        nvlinkSets = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(nvlinkSets));
        Objects.requireNonNull(pcieRoot, "pcieRoot");
    }

    /** The device's ID as a claim's allocation names it (driver, pool, device), and as the node's topology holds it. */
    public String id() {
        return id(driver, pool, name);
    }

    /** The ID of the device a claim's allocation result names. */
    public static String id(String driver, String pool, String device) {
        return driver + "/" + pool + "/" + device;
    }
}
