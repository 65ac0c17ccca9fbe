package io.hetgpu.simulator;

import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.Device;
import io.hetgpu.kubescheduler.dra.DeviceAttribute;
import io.hetgpu.kubescheduler.dra.Quantity;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A simulated node's GPUs as kube-scheduler's DRA allocator reads them when hetgpu's driver publishes them: one
 * node-local slice, pool and name after the node, a device {@code gpu-<position>} per GPU with the attributes of the
 * shared contract ({@link HetgpuDra#devices}, NVLink sets included) and its memory as capacity. The simulator's adapter
 * from its nodes to the allocator's records, as {@code HetgpuSlice} and the test cluster's {@code DraObjects} are the
 * node agent's and the API's.
 */
final class DraSlices {

    private DraSlices() {
    }

    /** The slice of {@code node}, its tiers from {@code catalog} (the one the inventory decoded the node with). */
    static ResourceSlice of(SimNode node, CardCatalog catalog) {
        var devices = HetgpuDra.devices(node.gpus().topology(), catalog, Map.of()).stream().map(DraSlices::device).toList();
        return ResourceSlice.nodeLocal(node.name(), HetgpuDra.DRIVER, HetgpuDra.pool(node.name()), devices);
    }

    private static Device device(HetgpuDra.Device device) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        device.attributes().forEach((name, value) -> attributes.put(name, switch (value) {
            case HetgpuDra.Value.Text text -> new DeviceAttribute.StringValue(text.value());
            case HetgpuDra.Value.Int number -> new DeviceAttribute.IntValue(number.value());
            case HetgpuDra.Value.Version version -> new DeviceAttribute.VersionValue(version.value());
        }));
        return new Device(device.name(), attributes, Map.of(HetgpuDra.MEMORY, Quantity.of(device.memoryBytes())));
    }
}
