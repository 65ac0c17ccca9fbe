package io.hetgpu.extender;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.inventory.FreeDevices;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.InventoryCodec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/** Node topologies of the common server types, with UUIDs unique per node name, for extender tests and the benchmark. */
public final class TestTopologies {

    public static final Instant READ_AT = Instant.parse("2026-01-01T00:00:00Z");

    private TestTopologies() {
    }

    public static NodeTopology k80x4(String node) {
        return pcie(node, 4, "Tesla K80", new ComputeCapability(3, 7), 11441, true);
    }

    public static NodeTopology t4x4(String node) {
        return pcie(node, 4, "Tesla T4", new ComputeCapability(7, 5), 15360, false);
    }

    public static NodeTopology v100Pcie(String node, int count) {
        return pcie(node, count, "Tesla V100-PCIE-32GB", new ComputeCapability(7, 0), 32768, false);
    }

    public static NodeTopology h100Pcie(String node, int count) {
        return pcie(node, count, "NVIDIA H100 PCIe", new ComputeCapability(9, 0), 81559, false);
    }

    /** DGX-1 V100: NVIDIA's hybrid cube-mesh of NVLink. */
    public static NodeTopology dgx1V100(String node) {
        var base = Fixtures.dgx1V100();
        return new NodeTopology(base.driverVersion(), base.cudaDriverVersion(), devices(node, 8, "Tesla V100-SXM2-16GB",
                new ComputeCapability(7, 0), 16160), base.links());
    }

    /** DGX-1 P100: the same hybrid cube-mesh, a generation older. */
    public static NodeTopology dgx1P100(String node) {
        var base = Fixtures.dgx1V100();
        return new NodeTopology(base.driverVersion(), base.cudaDriverVersion(), devices(node, 8, "Tesla P100-SXM2-16GB",
                new ComputeCapability(6, 0), 16280), base.links());
    }

    public static NodeTopology dgxA100(String node) {
        return nvswitch(node, "NVIDIA A100-SXM4-80GB", new ComputeCapability(8, 0), 81920, 12);
    }

    public static NodeTopology dgxH100(String node) {
        return nvswitch(node, "NVIDIA H100 80GB HBM3", new ComputeCapability(9, 0), 81559, 18);
    }

    private static NodeTopology nvswitch(String node, String product, ComputeCapability cc, long memory, int links) {
        return new NodeTopology("535.104.05", "12.2", devices(node, 8, product, cc, memory),
                LinkMatrix.builder(8, new GpuLink.Nvlink(links, true)).build());
    }

    /** Pairs behind one PCIe switch (or one board for K80), pairs joined at the host bridge, halves across sockets. */
    private static NodeTopology pcie(String node, int count, String product, ComputeCapability cc, long memory, boolean dualBoard) {
        var builder = LinkMatrix.builder(count, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        for (int i = 0; i < count; i++) {
            for (int j = i + 1; j < count; j++) {
                PcieRelation relation;
                if (i / 2 == j / 2) {
                    relation = dualBoard ? PcieRelation.SAME_BOARD : PcieRelation.SINGLE_SWITCH;
                } else if (i / 4 == j / 4) {
                    relation = PcieRelation.HOST_BRIDGE;
                } else {
                    relation = PcieRelation.ACROSS_SOCKETS;
                }
                builder.set(i, j, new GpuLink.Pcie(relation));
            }
        }
        return new NodeTopology("470.82.01", "11.4", devices(node, count, product, cc, memory), builder.build());
    }

    private static List<GpuDevice> devices(String node, int count, String product, ComputeCapability cc, long memory) {
        var devices = new ArrayList<GpuDevice>();
        int hash = Math.abs(node.hashCode() % 100000);
        for (int i = 0; i < count; i++) {
            devices.add(new GpuDevice(String.format("GPU-%05d%03d-%s", hash, i, node), i, product,
                    CardModel.fromProductName(product), GpuArchitecture.of(cc), cc, memory,
                    String.format("0000:%02x:00.0", 6 + i), i < count / 2 ? 0 : 1, DeviceHealth.HEALTHY));
        }
        return devices;
    }

    public static String inventory(NodeTopology topology) {
        return new InventoryCodec().encode(topology);
    }

    /** The gpu-free annotation listing the devices at these positions. */
    public static String free(NodeTopology topology, int... positions) {
        var uuids = new HashSet<String>();
        for (int position : positions) {
            uuids.add(topology.device(position).uuid());
        }
        return new FreeDevicesCodec().encode(new FreeDevices(uuids, READ_AT));
    }

    public static String allFree(NodeTopology topology) {
        return free(topology, java.util.stream.IntStream.range(0, topology.size()).toArray());
    }
}
