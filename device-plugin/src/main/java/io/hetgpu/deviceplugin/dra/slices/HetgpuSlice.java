package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpecBuilder;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What hetgpu's DRA driver publishes for a node, as a ResourceSlice's spec: one pool named after the node, one slice,
 * a device per GPU with {@link HetgpuDra}'s attributes typed as DRA types them and its memory as the {@code memory}
 * capacity. A GPU that is unhealthy is either tainted {@code NoSchedule} (where the API server keeps device taints) or
 * left out, so no new claim is given it; it is back, untainted, once it recovers. Pure: the node agent's
 * {@link SlicePublisher} writes it, the test cluster publishes it for its simulated nodes.
 */
public final class HetgpuSlice {

    /** The key of the taint an unhealthy GPU carries; its value is empty. */
    public static final String UNHEALTHY_TAINT = HetgpuDra.DRIVER + "/unhealthy";
    /** The effect of that taint: no new claim gets the GPU, claims that hold it keep it (as with the device plugin). */
    public static final String NO_SCHEDULE = "NoSchedule";
    /**
     * The API server refuses a string or version attribute longer than this (resource/v1 DeviceAttributeMaxValueLength)
     * and with it the whole slice; such an attribute is left out instead.
     */
    static final int MAX_VALUE_LENGTH = 64;

    /** How a GPU that is unhealthy is kept from new claims. */
    public enum Unhealthy {
        /** Published with a {@code NoSchedule} taint: the claims that hold it still see it. */
        TAINTED,
        /** Not published at all: for API servers that drop device taints (the DRADeviceTaints gate off). */
        LEFT_OUT
    }

    private HetgpuSlice() {
    }

    /**
     * The devices of {@code topology}, in position order, unhealthy ones tainted or left out; {@code pcieRoots} gives a
     * GPU's PCIe root by position where it is known ({@link PcieRoots}).
     */
    public static List<Device> devices(NodeTopology topology, CardCatalog catalog, Map<Integer, String> pcieRoots, Unhealthy unhealthy) {
        Objects.requireNonNull(unhealthy, "unhealthy");
        var published = HetgpuDra.devices(topology, catalog, pcieRoots);
        var devices = new ArrayList<Device>(published.size());
        for (int position = 0; position < published.size(); position++) {
            boolean healthy = topology.device(position).isHealthy();
            if (!healthy && unhealthy == Unhealthy.LEFT_OUT) {
                continue;
            }
            devices.add(device(published.get(position), healthy));
        }
        return List.copyOf(devices);
    }

    /** The spec of the node's one slice: its pool, at {@code generation}, holding {@code devices}. */
    public static ResourceSliceSpec spec(String driver, String nodeName, long generation, List<Device> devices) {
        return new ResourceSliceSpecBuilder().withDriver(driver).withNodeName(nodeName)
                .withNewPool().withName(HetgpuDra.pool(nodeName)).withGeneration(generation).withResourceSliceCount(1L).endPool()
                .withDevices(devices).build();
    }

    /**
     * The slice a simulated node publishes: every GPU, unhealthy ones tainted, at generation 1, named after the node and
     * the driver (a real node agent's name is chosen by the API server).
     */
    public static ResourceSlice of(String nodeName, NodeTopology topology, CardCatalog catalog) {
        var devices = devices(topology, catalog, Map.of(), Unhealthy.TAINTED);
        return new ResourceSliceBuilder().withNewMetadata().withName(nodeName + "-" + HetgpuDra.DRIVER).endMetadata()
                .withSpec(spec(HetgpuDra.DRIVER, nodeName, 1, devices)).build();
    }

    private static Device device(HetgpuDra.Device gpu, boolean healthy) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        gpu.attributes().forEach((name, value) -> {
            if (fits(value)) {
                attributes.put(name, attribute(value));
            }
        });
        Map<String, DeviceCapacity> capacity = Map.of(HetgpuDra.MEMORY,
                new DeviceCapacityBuilder().withValue(memory(gpu.memoryBytes())).build());
        var device = new DeviceBuilder().withName(gpu.name()).withAttributes(attributes).withCapacity(capacity);
        if (!healthy) {
            device.withTaints(unhealthyTaint());
        }
        return device.build();
    }

    /** The taint on an unhealthy GPU; the API server stamps its {@code timeAdded}. */
    static DeviceTaint unhealthyTaint() {
        return new DeviceTaintBuilder().withKey(UNHEALTHY_TAINT).withEffect(NO_SCHEDULE).build();
    }

    private static boolean fits(HetgpuDra.Value value) {
        return switch (value) {
            case HetgpuDra.Value.Text text -> text.value().length() <= MAX_VALUE_LENGTH;
            case HetgpuDra.Value.Version version -> version.value().length() <= MAX_VALUE_LENGTH;
            case HetgpuDra.Value.Int ignored -> true;
        };
    }

    private static DeviceAttribute attribute(HetgpuDra.Value value) {
        return switch (value) {
            case HetgpuDra.Value.Text text -> new DeviceAttributeBuilder().withString(text.value()).build();
            case HetgpuDra.Value.Int number -> new DeviceAttributeBuilder().withInt(number.value()).build();
            case HetgpuDra.Value.Version version -> new DeviceAttributeBuilder().withVersion(version.value()).build();
        };
    }

    /**
     * Bytes in the form the API server keeps a binary quantity in (its canonical form: the largest of Ti, Gi, Mi, Ki that
     * divides it), so what was written reads back the same: {@code 16Gi}, {@code 81559Mi}.
     */
    static Quantity memory(long bytes) {
        String[] suffixes = {"Ti", "Gi", "Mi", "Ki"};
        long[] units = {1L << 40, 1L << 30, 1L << 20, 1L << 10};
        for (int i = 0; i < units.length; i++) {
            if (bytes % units[i] == 0) {
                return new Quantity(bytes / units[i] + suffixes[i]);
            }
        }
        return new Quantity(Long.toString(bytes));
    }
}
