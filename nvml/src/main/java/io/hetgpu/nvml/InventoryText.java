package io.hetgpu.nvml;

import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.NvlinkIsland;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.stream.Collectors;

/** A node's GPU inventory as an admin reads it: one line per device, the link matrix, the NVLink islands. */
public final class InventoryText {

    private InventoryText() {
    }

    public static String render(String title, NodeTopology topology, CardCatalog catalog) {
        var text = new StringBuilder(title).append(System.lineSeparator());
        text.append(String.format("driver %s, CUDA %s, %d GPU(s)%n", topology.driverVersion(), topology.cudaDriverVersion(), topology.size()));
        text.append(String.format("  %-3s %-40s %-26s %-6s %-5s %10s  %-4s %-4s %-13s %s%n",
                "IDX", "UUID", "PRODUCT", "MODEL", "TIER", "MEMORY", "CC", "NUMA", "PCI", "HEALTH"));
        for (var device : topology.devices()) {
            var tier = catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB());
            text.append(String.format("  %-3d %-40s %-26s %-6s %-5s %6d MiB  %-4s %-4s %-13s %s%n", device.index(), device.uuid(),
                    device.product(), device.model(), tier.rank() + (tier.estimated() ? "*" : ""), device.memoryMiB(),
                    device.computeCapability(), device.hasNumaNode() ? Integer.toString(device.numaNode()) : "-",
                    device.pciBusId(), device.health().label()));
        }
        if (topology.size() > 1) {
            text.append("links (as nvidia-smi topo -m):").append(System.lineSeparator());
            topology.links().toString().lines().forEach(line -> text.append("  ").append(line).append(System.lineSeparator()));
        }
        var islands = NvlinkIsland.among(topology.links(), DeviceMask.all(topology.size())).stream()
                .filter(island -> island.size() > 1)
                .map(island -> island.positions().toString())
                .collect(Collectors.joining(" "));
        text.append("NVLink islands: ").append(islands.isEmpty() ? "none" : islands).append(System.lineSeparator());
        return text.toString();
    }
}
