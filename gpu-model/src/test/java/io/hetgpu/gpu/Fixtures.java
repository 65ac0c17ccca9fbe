package io.hetgpu.gpu;

import java.util.ArrayList;
import java.util.List;

/** Small hand-built topologies for unit tests of the model itself (profiles have their own tests). */
public final class Fixtures {

    /** DGX-1 V100 as `nvidia-smi topo -m` prints it on that machine (its hybrid cube-mesh of NVLink). */
    public static final String DGX1_V100_TOPO = """
                  G0  G1  G2  G3  G4  G5  G6  G7
            G0    X   NV1 NV1 NV2 NV2 SYS SYS SYS
            G1   NV1  X   NV2 NV1 SYS NV2 SYS SYS
            G2   NV1 NV2  X   NV2 SYS SYS NV1 SYS
            G3   NV2 NV1 NV2  X   SYS SYS SYS NV1
            G4   NV2 SYS SYS SYS  X   NV1 NV1 NV2
            G5   SYS NV2 SYS SYS NV1  X   NV2 NV1
            G6   SYS SYS NV1 SYS NV1 NV2  X   NV2
            G7   SYS SYS SYS NV1 NV2 NV1 NV2  X
            """;

    private Fixtures() {
    }

    public static LinkMatrix matrix(String topoTable) {
        var lines = topoTable.strip().lines().skip(1).toList();
        var rows = new ArrayList<List<GpuLink>>();
        for (var line : lines) {
            var tokens = line.strip().split("\\s+");
            var row = new ArrayList<GpuLink>();
            for (int j = 1; j < tokens.length; j++) {
                row.add(tokens[j].equals("X") ? null : GpuLink.parse(tokens[j]));
            }
            rows.add(row);
        }
        return LinkMatrix.of(rows);
    }

    public static GpuDevice device(int index, String product, ComputeCapability cc, long memoryMiB) {
        return new GpuDevice(String.format("GPU-%08d-0000-0000-0000-%012d", index, index), index, product,
                CardModel.fromProductName(product), GpuArchitecture.of(cc), cc, memoryMiB,
                String.format("0000:%02x:00.0", 6 + index), index < 4 ? 0 : 1, DeviceHealth.HEALTHY);
    }

    public static NodeTopology dgx1V100() {
        var devices = new ArrayList<GpuDevice>();
        for (int i = 0; i < 8; i++) {
            devices.add(device(i, "Tesla V100-SXM2-16GB", new ComputeCapability(7, 0), 16160));
        }
        return new NodeTopology("535.104.05", "12.2", devices, matrix(DGX1_V100_TOPO));
    }
}
