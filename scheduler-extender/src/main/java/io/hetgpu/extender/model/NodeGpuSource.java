package io.hetgpu.extender.model;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.HetgpuKeys;

/**
 * Where the extender learned a node's GPUs from, best first: hetgpu's own inventory (devices, links, which
 * are free), else a DRA driver's ResourceSlices (the cards and, from some drivers, their NVLink sets), else the labels
 * NVIDIA's GPU Feature Discovery writes (the card, not its links or its free
 * devices), else the node's allocatable count alone (how many GPUs, nothing about them). What a source
 * cannot tell is treated conservatively by the policy and said in its reasons.
 */
public sealed interface NodeGpuSource {

    /** What reasons call the node's GPUs of this source, after the device summary ("" when the summary says it all). */
    default String describe() {
        return "";
    }

    /** Whether the card model, memory and compute capability are known (the device filters can judge). */
    default boolean knowsModel() {
        return true;
    }

    /** Whether the links between the node's GPUs are known (an NVLink request can be judged). */
    default boolean knowsNvlink() {
        return true;
    }

    /** No GPUs: a CPU node; nothing about GPUs is left unknown. */
    record NoGpus() implements NodeGpuSource {
    }

    /** hetgpu's device plugin serves the node and publishes {@code hetgpu.io/gpu-inventory}: everything is known. */
    record HetgpuInventory(NodeTopology topology) implements NodeGpuSource {
    }

    /**
     * Another device plugin (NVIDIA's) serves the node and GPU Feature Discovery labels it.
     *
     * @param product           the label's product name, e.g. {@code Tesla-V100-SXM2-16GB}
     * @param model             the card model it names, as hetgpu's inventory would ({@code V100})
     * @param memoryMiB         memory of one GPU
     * @param computeCapability from the compute major and minor labels
     * @param count             GPUs kubelet offers (the node's allocatable)
     * @param replicas          shares per GPU (1 unless time-slicing or MPS shares them)
     * @param nvlinkFabric      the node's GPUs are in one NVLink clique ({@code nvidia.com/gpu.clique})
     * @param notes             why a better source was not used ("" when none was there to use)
     */
    record FeatureDiscoveryLabels(String product, String model, long memoryMiB, ComputeCapability computeCapability, int count,
                                  int replicas, boolean nvlinkFabric, String notes) implements NodeGpuSource {

        @Override
        public String describe() {
            return "from GPU Feature Discovery labels" + (replicas > 1 ? ", each GPU shared " + replicas + " ways" : "")
                    + (nvlinkFabric ? ", in one NVLink clique" : ", links unknown") + (notes.isEmpty() ? "" : "; " + notes);
        }

        @Override
        public boolean knowsNvlink() {
            return nvlinkFabric && replicas <= 1;
        }
    }

    /**
     * A DRA driver publishes the node's GPUs in ResourceSlices ({@code resource.k8s.io/v1}): the cards, their memory and,
     * where the driver publishes it, their NVLink sets. Which devices a pod gets is its claim's allocation, chosen by
     * kube-scheduler, never by hetgpu.
     *
     * @param count        whole GPUs the complete pools publish
     * @param drivers      the drivers that publish them
     * @param nvlinkKnown  every GPU's driver publishes its NVLink set
     * @param notes        what was left out of the slices and why ("" when nothing was)
     */
    record DraSlices(int count, java.util.List<String> drivers, boolean nvlinkKnown, String notes) implements NodeGpuSource {

        public DraSlices {
            drivers = java.util.List.copyOf(drivers);
        }

        @Override
        public String describe() {
            return "from ResourceSlices (" + String.join(", ", drivers) + ")" + (nvlinkKnown ? "" : ", links unknown")
                    + (notes.isEmpty() ? "" : "; " + notes);
        }

        @Override
        public boolean knowsNvlink() {
            return nvlinkKnown;
        }
    }

    /**
     * The node offers the GPU resource and nothing says which cards: neither hetgpu's inventory nor usable
     * GPU Feature Discovery labels.
     *
     * @param count GPUs kubelet offers
     * @param notes why the better sources were not used
     */
    record AllocatableOnly(int count, String notes) implements NodeGpuSource {

        @Override
        public String describe() {
            return "model unknown: " + notes;
        }

        @Override
        public boolean knowsModel() {
            return false;
        }

        @Override
        public boolean knowsNvlink() {
            return false;
        }
    }

    /** Why the policy cannot judge links on a node whose source does not know them. */
    String NVLINK_UNKNOWN = "NVLink unknown: node not served by hetgpu's device plugin (no " + HetgpuKeys.ANNOTATION_INVENTORY + ")";

    NodeGpuSource NONE = new NoGpus();
}
