package io.hetgpu.extender.model;

import java.util.List;
import java.util.Optional;

/**
 * The names one DRA driver publishes its GPUs under: which attribute holds the product name, the architecture, the
 * compute capability, and so on. A second driver that publishes GPUs is one more row of {@link #KNOWN}, read by the same
 * {@link SliceReader}. An empty name is an attribute the driver does not publish.
 *
 * @param name              the driver's name, also the domain of its unqualified attributes ({@code gpu.nvidia.com})
 * @param type              the attribute that tells a whole GPU from other devices (MIG slices, NICs), "" for none
 * @param gpuType           its value for a whole GPU
 * @param product           the product name as the driver reports it ({@code NVIDIA A100-SXM4-40GB})
 * @param model             the card model as hetgpu spells it ({@code A100}), read before the product name
 * @param architecture      the architecture's name ({@code Ampere}, {@code ampere})
 * @param computeCapability the CUDA compute capability, a version ({@code 8.0.0})
 * @param memory            the capacity holding one GPU's memory
 * @param nvlinkSet         an attribute whose equal values mark GPUs joined by NVLink, "" when the driver publishes none
 */
public record DraDriver(String name, String type, String gpuType, String product, String model, String architecture,
                        String computeCapability, String memory, String nvlinkSet) {

    /** NVIDIA's GPU DRA driver, as its kubelet plugin publishes a whole GPU (cmd/gpu-kubelet-plugin/deviceinfo.go). */
    public static final DraDriver NVIDIA = new DraDriver("gpu.nvidia.com", "type", "gpu", "productName", "", "architecture",
            "cudaComputeCapability", "memory", "");

    /** hetgpu's own names: the card model and family as its inventory writes them, and the NVLink set it measured. */
    public static final DraDriver HETGPU = new DraDriver("gpu.hetgpu.io", "type", "gpu", "productName", "model", "family",
            "computeCapability", "memory", "nvlinkSet");

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
}
