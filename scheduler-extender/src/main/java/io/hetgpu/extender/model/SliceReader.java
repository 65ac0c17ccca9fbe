package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.tier.CardCatalog;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads the GPUs of one node from the ResourceSlices that name it ({@code spec.nodeName}), the way kube-scheduler's
 * allocator gathers pools: per driver and pool, only the slices of the highest generation; a pool whose slices of that
 * generation are fewer than its {@code resourceSliceCount} is incomplete and left out (the driver is still publishing
 * it), and so is one that names a device twice. Only the devices of a {@linkplain DraDriver#KNOWN known driver} that are
 * whole GPUs are read; their card model comes from the model or product name, ranked by the card catalogue (by the tier
 * the driver publishes for a model the catalogue does not know); the NVLink sets, NUMA node and PCIe root a driver
 * publishes are kept for the node's links ({@link DraLinks}).
 *
 * <p>A driver's slices are input like any annotation: the slices read per node, the devices per slice and the length of
 * every value are bounded by this class's constants, not by what a slice holds; more GPUs than hetgpu handles on one node
 * ({@link NodeGpus#MAX_GPUS}) make the node's GPUs unusable, saying so, as an inventory of as many does.
 */
public final class SliceReader {

    /** Slices read per node: NVIDIA's driver publishes one or two per node (one per GPU with dynamic MIG). */
    public static final int MAX_SLICES_PER_NODE = 256;
    /** Devices read per slice: the API allows 128. */
    public static final int MAX_DEVICES_PER_SLICE = 128;
    /** Characters of an attribute's value kept: the API allows 64. */
    public static final int MAX_VALUE_CHARS = 256;

    /** Highest tier read from a driver: far above any tier table's. */
    static final long MAX_TIER = 10_000;
    /** Highest NUMA node read from a driver. */
    static final long MAX_NUMA_NODE = 1_023;

    private static final Pattern VERSION = Pattern.compile("(\\d{1,2})\\.(\\d{1,2})(?:\\.\\d{1,9})?(?:[-+].*)?");
    private static final BigDecimal MIB = BigDecimal.valueOf(1L << 20);

    private SliceReader() {
    }

    /** The GPUs {@code slices} publish for {@code node}; slices naming another node, or none, are not read. */
    public static NodeSlices read(String node, Collection<ResourceSlice> slices, CardCatalog catalog) {
        var notes = new ArrayList<String>();
        var pools = new LinkedHashMap<List<String>, List<ResourceSlice>>();
        int read = 0;
        for (var slice : slices) {
            var spec = slice == null ? null : slice.getSpec();
            if (spec == null || !node.equals(spec.getNodeName()) || spec.getPool() == null || spec.getDriver() == null
                    || DraDriver.named(spec.getDriver()).isEmpty()) {
                continue;
            }
            if (++read > MAX_SLICES_PER_NODE) {
                return problem("more than " + MAX_SLICES_PER_NODE + " ResourceSlices of GPU drivers name node " + Quote.of(node)
                        + ": hetgpu reads at most " + MAX_SLICES_PER_NODE);
            }
            var key = List.of(spec.getDriver(), String.valueOf(spec.getPool().getName()));
            var pool = pools.computeIfAbsent(key, k -> new ArrayList<>());
            long generation = generation(slice);
            if (!pool.isEmpty() && generation < generation(pool.getFirst())) {
                continue;
            }
            if (!pool.isEmpty() && generation > generation(pool.getFirst())) {
                pool.clear();
            }
            pool.add(slice);
        }
        var gpus = new ArrayList<DraDevice>();
        var drivers = new LinkedHashSet<String>();
        int other = 0;
        for (var entry : pools.entrySet()) {
            var driver = DraDriver.named(entry.getKey().get(0)).orElseThrow();
            var poolName = entry.getKey().get(1);
            var poolSlices = entry.getValue();
            var where = "pool " + Quote.of(driver.name() + "/" + poolName);
            Long expected = poolSlices.getFirst().getSpec().getPool().getResourceSliceCount();
            if (expected == null || expected != poolSlices.size()) {
                notes.add(where + " incomplete (" + poolSlices.size() + " of " + expected + " slices of generation "
                        + generation(poolSlices.getFirst()) + " seen): not counted until the driver has published it whole");
                continue;
            }
            var names = new HashSet<String>();
            var poolGpus = new ArrayList<DraDevice>();
            String invalid = null;
            for (var slice : poolSlices) {
                var devices = slice.getSpec().getDevices();
                if (devices == null) {
                    continue;
                }
                if (devices.size() > MAX_DEVICES_PER_SLICE) {
                    invalid = "a slice lists " + devices.size() + " devices, more than the API allows (" + MAX_DEVICES_PER_SLICE + ")";
                    break;
                }
                for (var device : devices) {
                    if (device == null || device.getName() == null) {
                        continue;
                    }
                    if (!names.add(device.getName())) {
                        invalid = "device " + Quote.of(device.getName()) + " named twice";
                        break;
                    }
                    if (!isGpu(driver, device)) {
                        other++;
                        continue;
                    }
                    try {
                        poolGpus.add(gpu(driver, poolName, device, catalog));
                    } catch (IllegalArgumentException e) {
                        notes.add(where + " device " + Quote.of(device.getName()) + " not counted: " + e.getMessage());
                    }
                    if (gpus.size() + poolGpus.size() > NodeGpus.MAX_GPUS) {
                        return problem("ResourceSlices publish more than " + NodeGpus.MAX_GPUS + " GPUs for node " + Quote.of(node)
                                + ": hetgpu handles at most " + NodeGpus.MAX_GPUS + " per node");
                    }
                }
                if (invalid != null) {
                    break;
                }
            }
            if (invalid != null) {
                notes.add(where + " invalid (" + invalid + "): not counted, as kube-scheduler allocates nothing from it");
                continue;
            }
            if (!poolGpus.isEmpty()) {
                drivers.add(driver.name());
            }
            gpus.addAll(poolGpus);
        }
        long tainted = gpus.stream().filter(gpu -> !gpu.untainted()).count();
        if (tainted > 0) {
            notes.add(tainted + " tainted (NoSchedule or NoExecute): not offered");
        }
        return new NodeSlices(gpus, List.copyOf(drivers), String.join("; ", notes), "");
    }

    private static NodeSlices problem(String why) {
        return new NodeSlices(List.of(), List.of(), "", why);
    }

    private static long generation(ResourceSlice slice) {
        var generation = slice.getSpec().getPool().getGeneration();
        return generation == null ? 0 : generation;
    }

    /**
     * A whole GPU: every device of a driver that publishes nothing else (hetgpu's); else its type attribute says so where
     * the driver publishes one, else it has a product name.
     */
    private static boolean isGpu(DraDriver driver, Device device) {
        if (driver.type().isEmpty()) {
            return true;
        }
        var type = text(driver, device.getAttributes(), driver.type());
        if (type != null) {
            return driver.gpuType().equals(type);
        }
        return text(driver, device.getAttributes(), driver.product()) != null;
    }

    private static DraDevice gpu(DraDriver driver, String pool, Device device, CardCatalog catalog) {
        var attributes = device.getAttributes();
        var product = text(driver, attributes, driver.product());
        var modelText = text(driver, attributes, driver.model());
        if ((modelText == null || modelText.isBlank()) && (product == null || product.isBlank())) {
            throw new IllegalArgumentException("no " + driver.product() + " attribute");
        }
        var model = CardModel.fromProductName(modelText != null && !modelText.isBlank() ? modelText : product);
        long memory = memoryMiB(driver, device);
        var capability = computeCapability(driver, attributes, model, catalog);
        var sets = new java.util.TreeMap<Integer, String>();
        driver.nvlinkSets().forEach((size, attribute) -> {
            var set = text(driver, attributes, attribute);
            if (set != null && !set.isBlank()) {
                sets.put(size, set.strip());
            }
        });
        var root = text(driver, attributes, driver.pcieRoot());
        return new DraDevice(driver.name(), pool, device.getName(), product == null || product.isBlank() ? model : product, model,
                memory, capability, (int) whole(driver, attributes, driver.tier(), MAX_TIER, 0), sets,
                (int) whole(driver, attributes, driver.numaNode(), MAX_NUMA_NODE, GpuDevice.NUMA_UNKNOWN),
                root == null ? "" : root.strip(), untainted(device));
    }

    /**
     * An int attribute's value between 0 and {@code max}, else {@code absent}: a tier or NUMA node out of any real range
     * is a driver's mistake that should cost the node nothing but that figure.
     */
    private static long whole(DraDriver driver, Map<String, DeviceAttribute> attributes, String name, long max, long absent) {
        if (attributes == null || name.isEmpty()) {
            return absent;
        }
        var attribute = lookup(driver, attributes, name);
        var value = attribute == null ? null : attribute.getInt();
        return value == null || value < 0 || value > max ? absent : value;
    }

    private static long memoryMiB(DraDriver driver, Device device) {
        var capacity = device.getCapacity() == null ? null : lookup(driver, device.getCapacity(), driver.memory());
        Quantity value = capacity == null ? null : capacity.getValue();
        if (value == null) {
            throw new IllegalArgumentException("no " + driver.memory() + " capacity");
        }
        BigDecimal bytes;
        try {
            bytes = Quantity.getAmountInBytes(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(driver.memory() + " capacity " + Quote.of(value) + " is not a quantity");
        }
        var mib = bytes.divideToIntegralValue(MIB);
        if (mib.signum() <= 0 || mib.compareTo(BigDecimal.valueOf(1L << 40)) > 0) {
            throw new IllegalArgumentException(driver.memory() + " capacity " + Quote.of(value) + " is not a GPU's memory");
        }
        return mib.longValue();
    }

    /** The version attribute, else the catalogue's capability for a model it knows, else the architecture's first. */
    private static ComputeCapability computeCapability(DraDriver driver, Map<String, DeviceAttribute> attributes, String model,
                                                       CardCatalog catalog) {
        var version = text(driver, attributes, driver.computeCapability());
        if (version != null) {
            var matcher = VERSION.matcher(version.strip());
            if (matcher.matches() && Integer.parseInt(matcher.group(1)) > 0) {
                return new ComputeCapability(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)));
            }
            throw new IllegalArgumentException(driver.computeCapability() + " " + Quote.of(version) + " is not a version such as 8.0.0");
        }
        if (catalog.knows(model)) {
            for (var card : catalog.cards()) {
                if (CardModel.fromProductName(card.model()).equals(model)) {
                    return card.computeCapability();
                }
            }
        }
        var architecture = text(driver, attributes, driver.architecture());
        if (architecture != null) {
            var first = firstCapability(architecture);
            if (first != null) {
                return first;
            }
        }
        throw new IllegalArgumentException("no " + driver.computeCapability() + " attribute, and the model " + Quote.of(model)
                + " and the architecture " + Quote.of(architecture) + " tell none");
    }

    /** The first compute capability of an architecture named as NVML or hetgpu name it ({@code Ampere}, {@code ampere}). */
    static ComputeCapability firstCapability(String architecture) {
        return switch (architecture.strip().toLowerCase(Locale.ROOT)) {
            case "kepler" -> new ComputeCapability(3, 0);
            case "maxwell" -> new ComputeCapability(5, 0);
            case "pascal" -> new ComputeCapability(6, 0);
            case "volta" -> new ComputeCapability(7, 0);
            case "turing" -> new ComputeCapability(7, 5);
            case "ampere" -> new ComputeCapability(8, 0);
            case "ada", "ada lovelace", "adalovelace" -> new ComputeCapability(8, 9);
            case "hopper" -> new ComputeCapability(9, 0);
            case "blackwell" -> new ComputeCapability(10, 0);
            default -> null;
        };
    }

    /** The architecture an architecture attribute names, {@link GpuArchitecture#UNKNOWN} for one hetgpu does not know. */
    static GpuArchitecture architectureOf(String name) {
        var first = name == null ? null : firstCapability(name);
        return first == null ? GpuArchitecture.UNKNOWN : GpuArchitecture.of(first);
    }

    private static boolean untainted(Device device) {
        if (device.getTaints() == null) {
            return true;
        }
        for (var taint : device.getTaints()) {
            if (taint != null && ("NoSchedule".equals(taint.getEffect()) || "NoExecute".equals(taint.getEffect()))) {
                return false;
            }
        }
        return true;
    }

    /** A string or version attribute's value, cut to {@link #MAX_VALUE_CHARS}; null when absent or of another kind. */
    static String text(DraDriver driver, Map<String, DeviceAttribute> attributes, String name) {
        if (attributes == null || name.isEmpty()) {
            return null;
        }
        var attribute = lookup(driver, attributes, name);
        if (attribute == null) {
            return null;
        }
        var value = attribute.getString() != null ? attribute.getString() : attribute.getVersion();
        if (value == null) {
            return null;
        }
        return value.length() > MAX_VALUE_CHARS ? value.substring(0, MAX_VALUE_CHARS) : value;
    }

    /** An attribute or capacity by its short name (the driver's own domain) or its name qualified by the driver. */
    private static <V> V lookup(DraDriver driver, Map<String, V> values, String name) {
        var value = values.get(name);
        return value != null ? value : values.get(driver.name() + "/" + name);
    }
}
