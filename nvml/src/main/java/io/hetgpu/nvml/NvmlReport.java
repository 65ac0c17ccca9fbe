package io.hetgpu.nvml;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.tier.CardCatalog;

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
            System.out.println(InventoryText.render(source.description(), source.topology(), CardCatalog.defaults()));
            System.out.println(new InventoryCodec().encode(source.topology()));
        } catch (GpuDiscoveryException e) {
            System.err.println(e.getMessage());
            System.exit(1);
        }
    }
}
