package io.hetgpu.testcluster.cluster;

import java.util.Objects;
import java.util.Optional;

/**
 * One node of a test cluster.
 *
 * @param name     node name
 * @param rack     value of {@code topology.hetgpu.io/rack}
 * @param zone     value of {@code topology.kubernetes.io/zone}
 * @param profile  the simulated GPU profile of its GPUs; empty for a CPU-only node
 * @param cpus     allocatable CPU cores
 * @param memoryGi allocatable memory in GiB
 * @param plugin   which device plugin serves its GPUs
 */
public record NodeSpec(String name, String rack, String zone, Optional<String> profile, int cpus, int memoryGi, GpuPlugin plugin) {

    /** Which device plugin serves a node's GPUs, and what it tells the cluster about them. */
    public enum GpuPlugin {
        /** hetgpu's own: devices, links and the free list in the Node's annotations. */
        HETGPU,
        /** NVIDIA's (a plain plugin here) with GPU Feature Discovery's labels: the card, not its links or free devices. */
        NVIDIA_WITH_FEATURE_DISCOVERY,
        /** A plain plugin and nothing else: only the allocatable count. */
        NVIDIA_ALONE,
        /**
         * NVIDIA's DRA driver and no device plugin: the GPUs published as a ResourceSlice ({@code gpu.nvidia.com}), no
         * {@code nvidia.com/gpu} in the node's allocatable.
         */
        NVIDIA_DRA,
        /**
         * hetgpu's node agent in DRA mode and no device plugin: the GPUs published as a ResourceSlice ({@code gpu.hetgpu.io})
         * with hetgpu's attributes (card model, tier, NVLink sets), no {@code nvidia.com/gpu} in the node's allocatable.
         */
        HETGPU_DRA
    }

    /** Which DRA driver publishes a {@link #dra(String, String, String, String, DraDriver) DRA node}'s GPUs. */
    public enum DraDriver {
        /** NVIDIA's ({@code gpu.nvidia.com}): the driver's own attributes, no NVLink. */
        NVIDIA(GpuPlugin.NVIDIA_DRA),
        /** hetgpu's ({@code gpu.hetgpu.io}): {@code HetgpuSlice}'s attributes, NVLink sets included. */
        HETGPU(GpuPlugin.HETGPU_DRA);

        private final GpuPlugin plugin;

        DraDriver(GpuPlugin plugin) {
            this.plugin = plugin;
        }

        public GpuPlugin plugin() {
            return plugin;
        }
    }

    public NodeSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(rack, "rack");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(plugin, "plugin");
    }

    /** A node whose GPUs, if any, hetgpu's device plugin serves. */
    public NodeSpec(String name, String rack, String zone, Optional<String> profile, int cpus, int memoryGi) {
        this(name, rack, zone, profile, cpus, memoryGi, GpuPlugin.HETGPU);
    }

    public static NodeSpec gpu(String name, String rack, String zone, String profile) {
        return new NodeSpec(name, rack, zone, Optional.of(profile), 96, 768);
    }

    /** A GPU node served by NVIDIA's device plugin and labelled by GPU Feature Discovery, as the GPU Operator sets one up. */
    public static NodeSpec featureDiscovery(String name, String rack, String zone, String profile) {
        return new NodeSpec(name, rack, zone, Optional.of(profile), 96, 768, GpuPlugin.NVIDIA_WITH_FEATURE_DISCOVERY);
    }

    /** A GPU node served by a plain device plugin with no labels: it shows only how many GPUs it offers. */
    public static NodeSpec allocatableOnly(String name, String rack, String zone, String profile) {
        return new NodeSpec(name, rack, zone, Optional.of(profile), 96, 768, GpuPlugin.NVIDIA_ALONE);
    }

    /** A GPU node whose GPUs NVIDIA's DRA driver publishes in a ResourceSlice, for pods that claim them. */
    public static NodeSpec dra(String name, String rack, String zone, String profile) {
        return dra(name, rack, zone, profile, DraDriver.NVIDIA);
    }

    /** A GPU node whose GPUs {@code driver} publishes in a ResourceSlice, for pods that claim them. */
    public static NodeSpec dra(String name, String rack, String zone, String profile, DraDriver driver) {
        return new NodeSpec(name, rack, zone, Optional.of(profile), 96, 768, driver.plugin());
    }

    public static NodeSpec cpu(String name, String rack, String zone) {
        return new NodeSpec(name, rack, zone, Optional.empty(), 64, 256);
    }

    public boolean hasGpus() {
        return profile.isPresent();
    }

    /** Whether hetgpu's device plugin runs on it (a GPU node served by hetgpu). */
    public boolean servedByHetgpu() {
        return hasGpus() && plugin == GpuPlugin.HETGPU;
    }

    /** Whether a DRA driver publishes its GPUs (and no device plugin serves them). */
    public boolean servedByDra() {
        return hasGpus() && (plugin == GpuPlugin.NVIDIA_DRA || plugin == GpuPlugin.HETGPU_DRA);
    }
}
