package io.hetgpu.gpu.profile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.cli.ParseErrors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads machine profiles: the ones shipped with hetgpu by name ({@code dgx1-v100}), or an admin's own
 * file by path, in YAML or JSON (format: {@code io/hetgpu/gpu/profiles/README.md}). Every problem is a
 * {@link ProfileFormatException} naming the file, the field and the value.
 */
public final class ProfileLoader {

    /** The profiles under {@code io/hetgpu/gpu/profiles/}, one file {@code <name>.yaml} each. */
    public static final List<String> SHIPPED = List.of(
            "dgx1-p100", "dgx1-v100", "dgx-a100", "dgx-h100", "dgx2-v100", "v100-pcie-8x", "t4-4x", "k80-4x", "mixed");

    private static final String RESOURCES = "/io/hetgpu/gpu/profiles/";
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9.-]*");
    private static final Pattern PCI_BUS_ID = Pattern.compile("[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

    private static final ObjectMapper YAML = YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    private static final ObjectMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private ProfileLoader() {
    }

    /** A shipped profile by name, or else a profile file by path. */
    public static MachineProfile load(String nameOrPath) throws ProfileFormatException {
        if (nameOrPath == null || nameOrPath.isBlank()) {
            throw new ProfileFormatException("no profile named: give one of " + String.join(", ", SHIPPED) + ", or a file path");
        }
        if (SHIPPED.contains(nameOrPath)) {
            return shipped(nameOrPath);
        }
        var path = Path.of(nameOrPath);
        try {
            return parse(nameOrPath, Files.readString(path, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new ProfileFormatException(nameOrPath + ": no such profile: not a shipped one ("
                    + String.join(", ", SHIPPED) + ") and no such file");
        } catch (IOException e) {
            throw new ProfileFormatException(nameOrPath + ": cannot read the profile: " + e.getMessage());
        }
    }

    private static MachineProfile shipped(String name) throws ProfileFormatException {
        var file = name + ".yaml";
        try (var in = ProfileLoader.class.getResourceAsStream(RESOURCES + file)) {
            if (in == null) {
                throw new IllegalStateException("shipped profile " + file + " is missing from the jar");
            }
            return parse(file, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read shipped profile " + file, e);
        }
    }

    /**
     * Parses profile text. {@code source} names it in error messages; a name ending in {@code .json} is
     * read as JSON, anything else as YAML (which also reads most JSON).
     */
    public static MachineProfile parse(String source, String text) throws ProfileFormatException {
        var json = source.toLowerCase(Locale.ROOT).endsWith(".json");
        JsonNode tree;
        try {
            tree = (json ? JSON : YAML).readTree(text);
        } catch (JsonProcessingException e) {
            throw new ProfileFormatException(source + ": " + ParseErrors.at(e) + "not valid " + (json ? "JSON" : "YAML") + ": "
                    + ParseErrors.sentences(e));
        }
        return read(ProfileFields.root(tree, source));
    }

    private static MachineProfile read(ProfileFields root) throws ProfileFormatException {
        root.allowOnly(Set.of("name", "description", "driverVersion", "cudaVersion", "gpu", "devices", "links"));
        var name = root.text("name");
        if (!NAME.matcher(name).matches()) {
            throw root.failure("name", "expected lower-case letters, digits, '.' and '-', got \"" + name + "\"");
        }
        var description = root.has("description") ? root.text("description") : "";
        var driverVersion = root.textOrNumber("driverVersion");
        var cudaVersion = root.textOrNumber("cudaVersion");
        var defaults = root.has("gpu") ? root.object("gpu") : null;
        if (defaults != null) {
            defaults.allowOnly(Set.of("product", "memoryMiB", "computeCapability"));
        }
        var devices = devices(root, defaults);
        var links = links(root.object("links"), devices.size());
        return new MachineProfile(name, description, driverVersion, cudaVersion, devices, links);
    }

    private static List<ProfileDevice> devices(ProfileFields root, ProfileFields defaults) throws ProfileFormatException {
        var entries = root.list("devices");
        if (entries.isEmpty() || entries.size() > DeviceMask.MAX_DEVICES) {
            throw root.failure("devices", "expected 1 to " + DeviceMask.MAX_DEVICES + " devices, got " + entries.size());
        }
        var devices = new ArrayList<ProfileDevice>();
        var busIds = new HashMap<String, Integer>();
        for (var entry : entries) {
            var device = entry.object();
            device.allowOnly(Set.of("pciBusId", "numaNode", "product", "memoryMiB", "computeCapability"));
            var product = ownOrDefault(device, defaults, "product").text("product");
            var memory = ownOrDefault(device, defaults, "memoryMiB").integer("memoryMiB", 1, Long.MAX_VALUE);
            var ccFields = ownOrDefault(device, defaults, "computeCapability");
            var ccText = ccFields.textOrNumber("computeCapability");
            ComputeCapability cc;
            try {
                cc = ComputeCapability.parse(ccText);
            } catch (IllegalArgumentException e) {
                throw ccFields.failure("computeCapability", "expected MAJOR.MINOR such as \"8.0\", got " + ccFields.node().get("computeCapability"));
            }
            var busId = device.text("pciBusId");
            if (!PCI_BUS_ID.matcher(busId).matches()) {
                throw device.failure("pciBusId", "expected a PCI bus ID such as \"0000:07:00.0\", got \"" + busId + "\"");
            }
            var earlier = busIds.put(busId.toLowerCase(Locale.ROOT), devices.size());
            if (earlier != null) {
                throw device.failure("pciBusId", "\"" + busId + "\" is already the bus ID of devices[" + earlier + "]");
            }
            var numa = device.has("numaNode") ? (int) device.integer("numaNode", 0, 1023) : GpuDevice.NUMA_UNKNOWN;
            devices.add(new ProfileDevice(product, memory, cc, busId, numa));
        }
        return devices;
    }

    /** The device's own entry when it sets {@code field}, else the {@code gpu} defaults (whose absence is reported on the device). */
    private static ProfileFields ownOrDefault(ProfileFields device, ProfileFields defaults, String field) {
        return device.has(field) || defaults == null || !defaults.has(field) ? device : defaults;
    }

    private static LinkMatrix links(ProfileFields links, int n) throws ProfileFormatException {
        if (links.has("topo")) {
            links.allowOnly(Set.of("topo"));
            var matrix = TopoTable.parse(links.text("topo"), links, "topo");
            if (matrix.size() != n) {
                throw links.failure("topo", "the table has " + matrix.size() + " GPUs but devices lists " + n);
            }
            return matrix;
        }
        if (links.has("nvswitch")) {
            links.allowOnly(Set.of("nvswitch"));
            var fabric = links.object("nvswitch");
            fabric.allowOnly(Set.of("links"));
            var perGpu = (int) fabric.integer("links", 1, 64);
            return LinkMatrix.builder(n, new GpuLink.Nvlink(perGpu, true)).build();
        }
        links.allowOnly(Set.of("nvlink", "pcie"));
        if (!links.has("pcie")) {
            throw links.failure("expected topo (an nvidia-smi topo -m table), nvswitch, or pcie (a PCIe tree, with nvlink pairs if any)");
        }
        var tree = PcieTree.read(links, "pcie", n);
        var builder = LinkMatrix.builder(n, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                builder.set(i, j, new GpuLink.Pcie(tree.relation(i, j)));
            }
        }
        if (links.has("nvlink")) {
            var seen = new HashMap<Long, String>();
            for (var entry : links.list("nvlink")) {
                var pair = entry.object();
                pair.allowOnly(Set.of("gpus", "links"));
                var gpus = pair.list("gpus");
                if (gpus.size() != 2) {
                    throw pair.failure("gpus", "expected two GPU indices, got " + ProfileFields.describe(pair.node().get("gpus")));
                }
                int a = gpus.get(0).integer(0, n - 1);
                int b = gpus.get(1).integer(0, n - 1);
                if (a == b) {
                    throw pair.failure("gpus", "a GPU has no NVLink to itself, got [" + a + ", " + b + "]");
                }
                var earlier = seen.put(DeviceMask.of(List.of(a, b)), entry.path());
                if (earlier != null) {
                    throw pair.failure("gpus", "the pair " + a + "-" + b + " is already given at " + earlier);
                }
                builder.set(a, b, new GpuLink.Nvlink((int) pair.integer("links", 1, 64), false));
            }
        }
        return builder.build();
    }
}
