package io.hetgpu.extender.model;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.allocation.GpuSetAllocator;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardTier;
import java.util.ArrayList;
import java.util.List;

/**
 * A node's GPUs as its best {@linkplain NodeGpuSource source} describes them, with everything derived from
 * them that does not change until that source does: the allocator and each device's tier. Built once per
 * inventory text (or labels and allocatable count).
 *
 * @param topology    devices and links (no devices on a CPU-only node)
 * @param allocator   the shared allocator over the node's links
 * @param tiers       the tier of the device at each position
 * @param healthyMask positions of healthy devices
 * @param problem     why the inventory could not be read ("" when it could)
 * @param kinds       the distinct kinds of device on the node
 * @param kindMasks   positions of the devices of each kind
 * @param summary     "8 V100 (16 GiB, cc 7.0)": the node's cards for reasons, written once per inventory
 * @param source      where the GPUs were learned from; on a node not served by hetgpu's device plugin the
 *                    topology is made up to the extent the source knows it (a GPU per allocatable
 *                    {@code nvidia.com/gpu}, PCIe across sockets between them) and the policy asks the source
 *                    what it does not know
 */
public record NodeGpus(NodeTopology topology, GpuSetAllocator allocator, List<CardTier> tiers, long healthyMask, String problem,
                       List<DeviceKind> kinds, long[] kindMasks, String summary, NodeGpuSource source) {

    public static final NodeGpus NONE = new NodeGpus(empty(), new GpuSetAllocator(empty().links()), List.of(), 0, "", List.of(), new long[0],
            "no GPUs", NodeGpuSource.NONE);

    /** The card model of GPUs whose model no source tells: "1 free GPU, pod needs 2" reads right in reasons. */
    public static final String UNKNOWN_MODEL = "GPU";

    /** Most GPUs one node can have: device sets are bit masks of a long. */
    public static final int MAX_GPUS = 64;

    public NodeGpus {
        java.util.Objects.requireNonNull(source, "source");
        tiers = List.copyOf(tiers);
        kinds = List.copyOf(kinds);
        kindMasks = kindMasks.clone();
    }

    /**
     * What the device filters look at, shared by every GPU of one product on a node (usually all of them),
     * so a request checks each kind once instead of every device.
     *
     * @param tier    the tier of every device of this kind (a function of the other three, by the node's catalog)
     * @param example one device of this kind
     */
    public record DeviceKind(String model, long memoryMiB, ComputeCapability computeCapability, CardTier tier, GpuDevice example) {

        @Override
        public boolean equals(Object other) {
            return other instanceof DeviceKind kind && kind.memoryMiB == memoryMiB && kind.model.equals(model)
                    && kind.computeCapability.equals(computeCapability);
        }

        @Override
        public int hashCode() {
            return model.hashCode() * 31 + Long.hashCode(memoryMiB) * 17 + computeCapability.hashCode();
        }
    }

    /** hetgpu's inventory of the node. */
    public static NodeGpus of(NodeTopology topology, CardCatalog catalog) {
        return of(topology, catalog, new NodeGpuSource.HetgpuInventory(topology), DeviceSummary.of(topology.devices()), null);
    }

    /**
     * GPUs described by GPU Feature Discovery's labels, all alike.
     *
     * @param healthy how many of them kubelet offers (fewer than {@code labels.count()} when it offers none)
     */
    public static NodeGpus of(NodeGpuSource.FeatureDiscoveryLabels labels, int healthy, CardCatalog catalog) {
        var devices = new ArrayList<GpuDevice>(labels.count());
        for (int i = 0; i < labels.count(); i++) {
            devices.add(new GpuDevice("gfd-" + i, i, labels.product(), labels.model(), GpuArchitecture.of(labels.computeCapability()),
                    labels.computeCapability(), labels.memoryMiB(), "unknown", GpuDevice.NUMA_UNKNOWN,
                    i < healthy ? DeviceHealth.HEALTHY : DeviceHealth.UNHEALTHY));
        }
        // Only a clique label says anything about links, and then that every GPU is on the NVLink fabric
        // (how many links is unknown: one, so a measured set of hetgpu's always ranks above it).
        GpuLink link = labels.knowsNvlink() ? new GpuLink.Nvlink(1, true) : UNKNOWN_LINK;
        var topology = new NodeTopology("unknown", "unknown", devices, LinkMatrix.builder(devices.size(), link).build());
        return of(topology, catalog, labels, DeviceSummary.of(devices) + " " + labels.describe(), null);
    }

    /**
     * GPUs a DRA driver publishes in ResourceSlices. Each device's ID is the one a claim's allocation names it by
     * ({@link DraDevice#id}), so the devices of allocated claims are positions of this topology. The links are those the
     * slices tell ({@link DraLinks}); a card the catalog does not know ranks by the tier its driver published, where it
     * published one, so that the extender ranks it as a selector on that tier selects it.
     */
    public static NodeGpus of(NodeSlices slices, CardCatalog catalog) {
        var devices = new ArrayList<GpuDevice>(slices.gpus().size());
        var tiers = new ArrayList<CardTier>(slices.gpus().size());
        int i = 0;
        for (var gpu : slices.gpus()) {
            devices.add(new GpuDevice(gpu.id(), i++, gpu.product(), gpu.model(), GpuArchitecture.of(gpu.computeCapability()),
                    gpu.computeCapability(), gpu.memoryMiB(), "unknown", gpu.numaNode(),
                    gpu.untainted() ? DeviceHealth.HEALTHY : DeviceHealth.UNHEALTHY));
            tiers.add(tierOf(gpu, catalog));
        }
        var source = new NodeGpuSource.DraSlices(devices.size(), slices.drivers(), slices.knowsNvlink(), slices.notes());
        var topology = new NodeTopology("unknown", "unknown", devices, DraLinks.of(slices.gpus()));
        return of(topology, catalog, source, DeviceSummary.of(devices) + " " + source.describe(), tiers::get);
    }

    /** The catalog's tier of a model it knows; else the published one, where there is one; else the catalog's estimate. */
    static CardTier tierOf(DraDevice gpu, CardCatalog catalog) {
        if (!catalog.knows(gpu.model()) && gpu.tier() > 0) {
            return new CardTier(gpu.model(), gpu.tier(), true, "unknown product " + gpu.model() + ": tier " + gpu.tier()
                    + " as " + gpu.driver() + " publishes it");
        }
        return catalog.tierOf(gpu.model(), gpu.computeCapability(), gpu.memoryMiB());
    }

    /** GPUs of which only the number is known; they rank in the middle of the catalog (see {@link CardCatalog#middleRank}). */
    public static NodeGpus of(NodeGpuSource.AllocatableOnly allocatable, CardCatalog catalog) {
        var devices = new ArrayList<GpuDevice>(allocatable.count());
        for (int i = 0; i < allocatable.count(); i++) {
            devices.add(new GpuDevice("gpu-" + i, i, "unknown", UNKNOWN_MODEL, GpuArchitecture.UNKNOWN, PLACEHOLDER_CAPABILITY,
                    1, "unknown", GpuDevice.NUMA_UNKNOWN, DeviceHealth.HEALTHY));
        }
        var topology = new NodeTopology("unknown", "unknown", devices, LinkMatrix.builder(devices.size(), UNKNOWN_LINK).build());
        var tier = new CardTier(UNKNOWN_MODEL, catalog.middleRank(), true,
                "model unknown: ranked in the middle of the catalog, neither sought nor avoided");
        var summary = allocatable.count() + (allocatable.count() == 1 ? " GPU" : " GPUs") + " of unknown model (" + allocatable.notes() + ")";
        return of(topology, catalog, allocatable, summary, position -> tier);
    }

    /**
     * Links between GPUs no source describes: the worst PCIe path, so that nothing is promised. The policy
     * does not rely on it: the NVLink filter and scorer ask the source.
     */
    private static final GpuLink UNKNOWN_LINK = new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS);

    /** Never compared: the device filters do not look at GPUs of unknown model. */
    private static final ComputeCapability PLACEHOLDER_CAPABILITY = new ComputeCapability(1, 0);

    /** @param tierAt each device's tier by position, or null to rank each by the catalog */
    private static NodeGpus of(NodeTopology topology, CardCatalog catalog, NodeGpuSource source, String summary,
                               java.util.function.IntFunction<CardTier> tierAt) {
        long healthy = 0;
        var tiers = new java.util.ArrayList<CardTier>(topology.size());
        var kinds = new java.util.LinkedHashMap<DeviceKind, Long>();
        for (int i = 0; i < topology.size(); i++) {
            var device = topology.device(i);
            if (device.isHealthy()) {
                healthy |= 1L << i;
            }
            var tier = tierAt != null ? tierAt.apply(i) : catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB());
            tiers.add(tier);
            kinds.merge(new DeviceKind(device.model(), device.memoryMiB(), device.computeCapability(), tier, device), 1L << i, (a, b) -> a | b);
        }
        return new NodeGpus(topology, new GpuSetAllocator(topology.links()), tiers, healthy, "",
                List.copyOf(kinds.keySet()), kinds.values().stream().mapToLong(Long::longValue).toArray(), summary, source);
    }

    /** A node that has GPUs by some account but none that can be read: it offers none and says why. */
    public static NodeGpus unreadable(String problem) {
        return new NodeGpus(empty(), NONE.allocator(), List.of(), 0, problem, List.of(), new long[0], "no readable GPU inventory",
                NodeGpuSource.NONE);
    }

    public int size() {
        return topology.size();
    }

    /**
     * Positions of the devices a bind recorded for a pod ({@code hetgpu.io/gpu-devices}), or empty when they are not a
     * record of this node: none listed, one that is not among this inventory's devices (the inventory changed, or the
     * annotation names another node's), or GPUs not read from hetgpu's inventory (only its devices have IDs the bind
     * verb hands out). The caller then predicts the pod's holding instead.
     *
     * <p>On a node of hetgpu's inventory, the devices of hetgpu's DRA driver that allocated claims name
     * ({@code gpu.hetgpu.io/<node>/gpu-<position>}) are the inventory's devices at those positions.
     *
     * <p>On a node whose GPUs a DRA driver publishes, the devices are those of the pod's allocated claims
     * ({@link DraDevice#id}): the claims may also name devices that are not this node's GPUs (a NIC, a MIG slice), which
     * hold nothing here, so the mask is that of the GPUs among them, empty only when none is.
     */
    public java.util.OptionalLong maskOf(List<String> devices) {
        if (devices.isEmpty()) {
            return java.util.OptionalLong.empty();
        }
        if (source instanceof NodeGpuSource.DraSlices) {
            long mask = 0;
            for (var device : devices) {
                var position = topology.positionOf(device);
                if (position.isPresent()) {
                    mask |= 1L << position.get();
                }
            }
            return mask == 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(mask);
        }
        if (!(source instanceof NodeGpuSource.HetgpuInventory)) {
            return java.util.OptionalLong.empty();
        }
        long mask = 0;
        for (var device : devices) {
            var position = topology.positionOf(device);
            if (position.isEmpty()) {
                position = hetgpuDraPosition(device);
            }
            if (position.isEmpty()) {
                return java.util.OptionalLong.empty();
            }
            mask |= 1L << position.get();
        }
        return java.util.OptionalLong.of(mask);
    }

    /**
     * The position a device of hetgpu's DRA driver names ({@code gpu.hetgpu.io/<node>/gpu-3}), on a node whose agent also
     * publishes hetgpu's inventory: its device names are the inventory's positions, so an allocated claim's devices are
     * the inventory's own. Holdings are read per node, so the pool, named after the node, is this one.
     */
    private java.util.Optional<Integer> hetgpuDraPosition(String device) {
        var prefix = io.hetgpu.gpu.inventory.HetgpuDra.DRIVER + "/";
        int slash = device.lastIndexOf('/');
        if (!device.startsWith(prefix) || slash < prefix.length()) {
            return java.util.Optional.empty();
        }
        return io.hetgpu.gpu.inventory.HetgpuDra.positionOf(device.substring(slash + 1)).filter(position -> position < topology.size());
    }

    private static NodeTopology empty() {
        return new NodeTopology("none", "none", List.of(), LinkMatrix.of(List.of()));
    }
}
