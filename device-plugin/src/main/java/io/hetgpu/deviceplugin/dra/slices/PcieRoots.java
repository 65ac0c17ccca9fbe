package io.hetgpu.deviceplugin.dra.slices;

import io.hetgpu.gpu.NodeTopology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Each GPU's PCIe root complex ({@code resource.kubernetes.io/pcieRoot}, {@code pci<domain>:<bus>}) as upstream's
 * helper derives it (k8s.io/dynamic-resource-allocation/deviceattribute): {@code <sysfs>/bus/pci/devices/<busID>} is a
 * link into {@code <sysfs>/devices/}, whose path follows the hardware, and its first directory there is the root
 * ({@code ../../../devices/pci0000:00/0000:00:01.0/0000:04:00.0} → {@code pci0000:00}). A GPU whose link is missing or
 * points elsewhere gets no attribute; nothing here fails.
 */
public final class PcieRoots {

    /** The extended BDF form upstream accepts ({@code 0000:04:1f.0}); sysfs names devices in lower case. */
    private static final Pattern BUS_ID = Pattern.compile("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]");

    private PcieRoots() {
    }

    /** The PCIe root of every GPU of {@code topology} that has one under {@code sysfsRoot} (normally {@code /sys}), by position. */
    public static Map<Integer, String> of(NodeTopology topology, Path sysfsRoot) {
        var roots = new LinkedHashMap<Integer, String>();
        for (int position = 0; position < topology.size(); position++) {
            int at = position;
            rootOf(topology.device(position).pciBusId(), sysfsRoot).ifPresent(root -> roots.put(at, root));
        }
        return Map.copyOf(roots);
    }

    /** The root of one bus ID, empty where sysfs does not say. */
    static Optional<String> rootOf(String pciBusId, Path sysfsRoot) {
        var busId = pciBusId.strip().toLowerCase(Locale.ROOT);
        if (!BUS_ID.matcher(busId).matches()) {
            return Optional.empty();
        }
        var root = sysfsRoot.toAbsolutePath().normalize();
        var link = root.resolve("bus").resolve("pci").resolve("devices").resolve(busId);
        Path target;
        try {
            target = link.getParent().resolve(Files.readSymbolicLink(link)).normalize();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
        if (!target.startsWith(root.resolve("devices")) || !target.getFileName().toString().equals(busId)) {
            return Optional.empty();
        }
        var first = root.resolve("devices").relativize(target).getName(0).toString();
        return first.startsWith("pci") ? Optional.of(first) : Optional.empty();
    }
}
