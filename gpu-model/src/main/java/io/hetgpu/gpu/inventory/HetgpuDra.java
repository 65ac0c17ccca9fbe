package io.hetgpu.gpu.inventory;

import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What hetgpu's DRA driver publishes for each GPU: the driver and device names, and every attribute as a plain typed
 * value. The node agent turns these into ResourceSlices, the test cluster into its simulated nodes' slices, and the
 * extender reads them back, so the three agree on one table. docs/reference.md lists the attributes for users.
 */
public final class HetgpuDra {

    /** The driver's name, also the domain its attributes are qualified with in CEL ({@code device.attributes["gpu.hetgpu.io"]}). */
    public static final String DRIVER = "gpu.hetgpu.io";

    public static final String UUID = "uuid";
    public static final String PRODUCT_NAME = "productName";
    public static final String MODEL = "model";
    public static final String FAMILY = "family";
    public static final String TIER = "tier";
    public static final String COMPUTE_CAPABILITY = "cudaComputeCapability";
    public static final String DRIVER_VERSION = "driverVersion";
    public static final String PCI_BUS_ID = "resource.kubernetes.io/pciBusID";
    public static final String PCIE_ROOT = "resource.kubernetes.io/pcieRoot";
    public static final String NUMA_NODE = "numaNode";
    /** The memory capacity's name. */
    public static final String MEMORY = "memory";

    private static final String DEVICE_PREFIX = "gpu-";
    private static final Pattern DEVICE_NAME = Pattern.compile("gpu-(0|[1-9][0-9]{0,2})");
    private static final Pattern NUMERIC_VERSION = Pattern.compile("(\\d{1,9})(?:\\.(\\d{1,9}))?(?:\\.(\\d{1,9}))?");

    private HetgpuDra() {
    }

    /** The attribute naming a GPU's NVLink set of {@code size} ({@code nvlinkSet2}, {@code nvlinkSet4}, {@code nvlinkSet8}). */
    public static String nvlinkSet(int size) {
        return "nvlinkSet" + size;
    }

    /** The pool of a node's GPUs: one per node, named after it. */
    public static String pool(String nodeName) {
        return nodeName;
    }

    /** The device name of the GPU at {@code position} of its node's topology. */
    public static String deviceName(int position) {
        return DEVICE_PREFIX + position;
    }

    /** The topology position a device name stands for; empty for a name this driver never publishes. */
    public static Optional<Integer> positionOf(String deviceName) {
        if (deviceName == null || !DEVICE_NAME.matcher(deviceName).matches()) {
            return Optional.empty();
        }
        return Optional.of(Integer.parseInt(deviceName.substring(DEVICE_PREFIX.length())));
    }

    /** One attribute's value, typed as DRA types it. */
    public sealed interface Value {
        record Text(String value) implements Value { }
        record Int(long value) implements Value { }
        /** A semantic version, {@code major.minor.patch} without leading zeros. */
        record Version(String value) implements Value { }
    }

    /** One GPU as the driver publishes it. */
    public record Device(String name, Map<String, Value> attributes, long memoryBytes) {
        public Device {
            attributes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
        }
    }

    /**
     * Every GPU of {@code topology} with its attributes, in position order. {@code pcieRoots} gives a GPU's PCIe root
     * by position where the node agent knows it (from sysfs); a driver version that is not numeric (a simulated
     * node's) is left out rather than published as a version no selector could compare.
     */
    public static List<Device> devices(NodeTopology topology, CardCatalog catalog, Map<Integer, String> pcieRoots) {
        var nvlink = NvlinkSets.offeredBy(topology.links());
        var driverVersion = semanticVersion(topology.driverVersion());
        var devices = new java.util.ArrayList<Device>();
        for (int position = 0; position < topology.size(); position++) {
            GpuDevice gpu = topology.device(position);
            var attributes = new LinkedHashMap<String, Value>();
            attributes.put(UUID, new Value.Text(gpu.uuid()));
            attributes.put(PRODUCT_NAME, new Value.Text(gpu.product()));
            attributes.put(MODEL, new Value.Text(gpu.model()));
            attributes.put(FAMILY, new Value.Text(gpu.family().label()));
            attributes.put(TIER, new Value.Int(catalog.tierOf(gpu.model(), gpu.computeCapability(), gpu.memoryMiB()).rank()));
            attributes.put(COMPUTE_CAPABILITY, new Value.Version(gpu.computeCapability().major() + "." + gpu.computeCapability().minor() + ".0"));
            driverVersion.ifPresent(version -> attributes.put(DRIVER_VERSION, new Value.Version(version)));
            attributes.put(PCI_BUS_ID, new Value.Text(gpu.pciBusId()));
            var root = pcieRoots.get(position);
            if (root != null) {
                attributes.put(PCIE_ROOT, new Value.Text(root));
            }
            if (gpu.hasNumaNode()) {
                attributes.put(NUMA_NODE, new Value.Int(gpu.numaNode()));
            }
            for (var sets : nvlink) {
                int at = position;
                sets.setOf(at).ifPresent(set -> attributes.put(nvlinkSet(sets.size()), new Value.Text(set)));
            }
            devices.add(new Device(deviceName(position), attributes, gpu.memoryMiB() * 1024 * 1024));
        }
        return List.copyOf(devices);
    }

    /** {@code 535.104.05} as {@code 535.104.5}; empty for a version that is not one to three numbers. */
    static Optional<String> semanticVersion(String driverVersion) {
        var matcher = NUMERIC_VERSION.matcher(driverVersion == null ? "" : driverVersion.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        long major = Long.parseLong(matcher.group(1));
        long minor = matcher.group(2) == null ? 0 : Long.parseLong(matcher.group(2));
        long patch = matcher.group(3) == null ? 0 : Long.parseLong(matcher.group(3));
        return Optional.of(major + "." + minor + "." + patch);
    }
}
