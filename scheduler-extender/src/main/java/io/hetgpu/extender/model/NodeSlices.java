package io.hetgpu.extender.model;

import java.util.List;
import java.util.Objects;

/**
 * The GPUs a node's ResourceSlices publish, read once per change of those slices ({@link SliceReader}): what a node
 * served by a DRA driver has instead of hetgpu's inventory or GPU Feature Discovery's labels.
 *
 * @param gpus    the whole GPUs of the complete pools, in pool and slice order
 * @param drivers the drivers that publish them
 * @param notes   what was left out and why (an incomplete pool, a device without memory), "" when nothing was
 * @param problem why the GPUs cannot be used at all (more than hetgpu handles), "" when they can
 */
public record NodeSlices(List<DraDevice> gpus, List<String> drivers, String notes, String problem) {

    /** A node no slice publishes a GPU for. */
    public static final NodeSlices NONE = new NodeSlices(List.of(), List.of(), "", "");

    public NodeSlices {
        gpus = List.copyOf(gpus);
        drivers = List.copyOf(drivers);
        Objects.requireNonNull(notes, "notes");
        Objects.requireNonNull(problem, "problem");
    }

    /** Whether the slices say anything about GPUs: some, or why there are none to use. */
    public boolean publishesGpus() {
        return !gpus.isEmpty() || !problem.isEmpty();
    }

    /**
     * Whether every GPU's driver publishes its NVLink sets: then links are known as far as a claim can ask for them, a GPU
     * in no set having none.
     */
    public boolean knowsNvlink() {
        if (gpus.isEmpty()) {
            return false;
        }
        for (var gpu : gpus) {
            if (!DraDriver.named(gpu.driver()).map(DraDriver::publishesNvlink).orElse(false)) {
                return false;
            }
        }
        return true;
    }
}
