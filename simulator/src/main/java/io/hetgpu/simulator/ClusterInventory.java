package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.profile.ProfileFormatException;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.CpuMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * The nodes of a simulated cluster, built from hetgpu's shipped machine profiles, so that each node
 * model has its real NVLink/PCIe topology.
 *
 * @param catalog the card table the nodes' tiers come from, which the DRA slices publish too
 */
public record ClusterInventory(List<SimNode> nodes, CardCatalog catalog) {

    public ClusterInventory {
        nodes = List.copyOf(nodes);
        java.util.Objects.requireNonNull(catalog, "catalog");
    }

    /** Nodes whose tiers come from the built-in card table. */
    public ClusterInventory(List<SimNode> nodes) {
        this(nodes, CardCatalog.defaults());
    }

    public int gpuCount() {
        return nodes.stream().mapToInt(node -> node.gpus().size()).sum();
    }

    /** A DGX-1's host: two 20-core Xeon E5-2698 v4 (80 threads) and 512 GiB. */
    static final CpuMemory DGX1_HOST = CpuMemory.of(80, 512);
    /** A typical 4-GPU K80 server of its generation: two 12-core Xeon E5-2670 v3 (48 threads) and 256 GiB. */
    static final CpuMemory K80_SERVER_HOST = CpuMemory.of(48, 256);

    /**
     * Gavel's cluster: 36 K80 (9 k80-4x), 36 P100 (4.5 dgx1-p100), 36 V100 (4.5 dgx1-v100), in 4 racks, models
     * interleaved. Hosts have their machines' cpu and memory, which is what kube-scheduler's own scores spread by.
     */
    public static ClusterInventory gavel() {
        var builder = new Builder(CardCatalog.defaults(), 4);
        for (int i = 0; i < 9; i++) {
            builder.add("k80-" + i, "k80-4x", 4, null, 0, K80_SERVER_HOST);
        }
        for (var kind : List.of("p100", "v100")) {
            for (int i = 0; i < 5; i++) {
                // The fifth node is half a DGX-1: its first four GPUs, one fully NVLink-connected quad.
                builder.add(kind + "-" + i, "dgx1-" + kind, i < 4 ? 8 : 4, null, 0, DGX1_HOST);
            }
        }
        return builder.build();
    }

    static NodeTopology load(String profile, String nodeName) {
        try {
            return ProfileLoader.load(profile).topology(nodeName);
        } catch (ProfileFormatException e) {
            throw new IllegalStateException("shipped profile " + profile + " unreadable: " + e.getMessage(), e);
        }
    }

    /** Adds nodes one by one; racks are assigned round-robin so every rack holds every model. No zones. */
    static final class Builder {
        private final CardCatalog catalog;
        private final int racks;
        private final List<SimNode> nodes = new ArrayList<>();

        Builder(CardCatalog catalog, int racks) {
            this.catalog = catalog;
            this.racks = racks;
        }

        /**
         * @param count      GPUs to keep: the profile's first {@code count} devices and the links among them
         * @param product    product name to give the devices instead of the profile's (a stand-in), or null
         * @param memoryMiB  memory to give them instead of the profile's (0 = keep)
         * @param host       the node's allocatable cpu and memory
         */
        Builder add(String name, String profile, int count, String product, long memoryMiB, CpuMemory host) {
            var shaped = first(load(profile, name), count, product, memoryMiB);
            nodes.add(new SimNode(name, "rack-" + nodes.size() % racks, "", NodeGpus.of(shaped, catalog), host));
            return this;
        }

        ClusterInventory build() {
            return new ClusterInventory(nodes, catalog);
        }
    }

    static NodeTopology first(NodeTopology topology, int count, String product, long memoryMiB) {
        if (count > topology.size()) {
            throw new IllegalArgumentException("profile has " + topology.size() + " GPUs, asked for " + count);
        }
        var devices = new ArrayList<GpuDevice>(count);
        for (int i = 0; i < count; i++) {
            var d = topology.device(i);
            var name = product == null ? d.product() : product;
            var model = product == null ? d.model() : io.hetgpu.gpu.CardModel.fromProductName(product);
            devices.add(new GpuDevice(d.uuid(), d.index(), name, model, GpuArchitecture.of(d.computeCapability()), d.computeCapability(),
                    memoryMiB > 0 ? memoryMiB : d.memoryMiB(), d.pciBusId(), d.numaNode(), d.health()));
        }
        if (count == 0) {
            return new NodeTopology(topology.driverVersion(), topology.cudaDriverVersion(), List.of(), LinkMatrix.of(List.of()));
        }
        var links = LinkMatrix.builder(count, topology.size() > 1 ? topology.links().link(0, 1) : new io.hetgpu.gpu.GpuLink.Pcie(io.hetgpu.gpu.PcieRelation.ACROSS_SOCKETS));
        for (int i = 0; i < count; i++) {
            for (int j = i + 1; j < count; j++) {
                links.set(i, j, topology.links().link(i, j));
            }
        }
        return new NodeTopology(topology.driverVersion(), topology.cudaDriverVersion(), devices, links.build());
    }
}
