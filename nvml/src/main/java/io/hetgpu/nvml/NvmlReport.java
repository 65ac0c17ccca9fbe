package io.hetgpu.nvml;

import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryCodec;

/**
 * Prints what NVML reports on this node: devices, the link matrix as {@code nvidia-smi topo -m} shows it,
 * and the {@code hetgpu.io/gpu-inventory} JSON. For checking a GPU machine by hand:
 * {@code java -cp <nvml jar and its dependencies> io.hetgpu.nvml.NvmlReport}.
 */
public final class NvmlReport {

    private NvmlReport() {
    }

    public static void main(String[] args) {
        try (var source = NvmlGpuSource.open(NvmlOptions.defaults())) {
            System.out.println(render(source.description(), source.topology()));
        } catch (GpuDiscoveryException e) {
            System.err.println(e.getMessage());
            System.exit(1);
        }
    }

    static String render(String description, NodeTopology topology) {
        var text = new StringBuilder(description).append(System.lineSeparator());
        for (var device : topology.devices()) {
            text.append(String.format("GPU %d  %s  %s (%s, %s, cc %s)  %d MiB  pci %s  numa %s  %s%n",
                    device.index(), device.uuid(), device.product(), device.model(), device.family().label(),
                    device.computeCapability(), device.memoryMiB(), device.pciBusId(),
                    device.hasNumaNode() ? device.numaNode() : "unknown", device.health().label()));
        }
        text.append(topology.links()).append(System.lineSeparator());
        text.append(new InventoryCodec().encode(topology));
        return text.toString();
    }
}
