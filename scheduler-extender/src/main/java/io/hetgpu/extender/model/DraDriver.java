package io.hetgpu.extender.model;

import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The names one DRA driver publishes its GPUs under: which attribute holds the product name, the architecture, the
 * compute capability, and so on. A second driver that publishes GPUs is one more row of {@link #KNOWN}, read by the same
 * {@link SliceReader}. An empty name is an attribute the driver does not publish.
 *
 * @param name              the driver's name, also the domain of its unqualified attributes ({@code gpu.nvidia.com})
 * @param type              the attribute that tells a whole GPU from other devices (MIG slices, NICs), "" when every
 *                          device the driver publishes is a whole GPU
 * @param gpuType           its value for a whole GPU
 * @param product           the product name as the driver reports it ({@code NVIDIA A100-SXM4-40GB})
 * @param model             the card model as hetgpu spells it ({@code A100}), read before the product name
 * @param architecture      the architecture's name ({@code Ampere}, {@code ampere})
 * @param computeCapability the CUDA compute capability, a version ({@code 8.0.0})
 * @param memory            the capacity holding one GPU's memory
 * @param tier              an int attribute ranking the card (higher is newer), read where the catalogue does not know
 *                          the model; "" when the driver publishes none
 * @param nvlinkSets        by set size, the attribute whose equal values mark the GPUs of one NVLink-connected set of
 *                          that size; empty when the driver publishes no NVLink
 * @param numaNode          an int attribute naming the GPU's NUMA node, "" for none
 * @param pcieRoot          a string attribute naming the GPU's PCIe root complex, "" for none
 */
public record DraDriver(String name, String type, String gpuType, String product, String model, String architecture,
                        String computeCapability, String memory, String tier, Map<Integer, String> nvlinkSets, String numaNode,
                        String pcieRoot) {

    public DraDriver {
        nvlinkSets = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(nvlinkSets));
    }

    /** NVIDIA's GPU DRA driver, as its kubelet plugin publishes a whole GPU (cmd/gpu-kubelet-plugin/deviceinfo.go). */
    public static final DraDriver NVIDIA = new DraDriver("gpu.nvidia.com", "type", "gpu", "productName", "", "architecture",
            "cudaComputeCapability", "memory", "", Map.of(), "", "");

    /**
     * hetgpu's own driver, by the names of the shared contract ({@link HetgpuDra}): each device is a whole GPU, with
     * hetgpu's card model, family and tier, and the NVLink sets of 2, 4 and 8 a claim's {@code matchAttribute} asks for.
     */
    public static final DraDriver HETGPU = new DraDriver(HetgpuDra.DRIVER, "", "", HetgpuDra.PRODUCT_NAME, HetgpuDra.MODEL,
            HetgpuDra.FAMILY, HetgpuDra.COMPUTE_CAPABILITY, HetgpuDra.MEMORY, HetgpuDra.TIER, hetgpuNvlinkSets(), HetgpuDra.NUMA_NODE,
            HetgpuDra.PCIE_ROOT);

    /** Every driver whose devices are read as GPUs. */
    public static final List<DraDriver> KNOWN = List.of(NVIDIA, HETGPU);

    /** The known driver of that name. */
    public static Optional<DraDriver> named(String driver) {
        for (var known : KNOWN) {
            if (known.name.equals(driver)) {
                return Optional.of(known);
            }
        }
        return Optional.empty();
    }

    /** Whether the driver publishes which NVLink sets its GPUs are in: then a GPU in none has no NVLink. */
    public boolean publishesNvlink() {
        return !nvlinkSets.isEmpty();
    }

    /**
     * The size of the NVLink sets whose attribute a claim's {@code matchAttribute} names (fully qualified, as the API
     * requires: {@code gpu.hetgpu.io/nvlinkSet4}), if it is one of this driver's.
     */
    public Optional<Integer> nvlinkSetSize(String qualifiedAttribute) {
        for (var entry : nvlinkSets.entrySet()) {
            if ((name + "/" + entry.getValue()).equals(qualifiedAttribute)) {
                return Optional.of(entry.getKey());
            }
        }
        return Optional.empty();
    }

    private static Map<Integer, String> hetgpuNvlinkSets() {
        var sets = new LinkedHashMap<Integer, String>();
        for (int size : NvlinkSets.SIZES) {
            sets.put(size, HetgpuDra.nvlinkSet(size));
        }
        return sets;
    }
}
