package io.hetgpu.gpu.inventory;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.allocation.DeviceMask;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code hetgpu.io/gpu-inventory} annotation: a node's devices and link matrix as JSON.
 *
 * <pre>{@code
 * {"schema":1,"driverVersion":"535.104.05","cudaDriverVersion":"12.2",
 *  "devices":[{"index":0,"uuid":"GPU-…","product":"Tesla V100-SXM2-16GB","model":"V100","family":"volta",
 *              "computeCapability":"7.0","memoryMiB":16384,"pciBusId":"0000:06:00.0","numaNode":0,"health":"healthy"}, …],
 *  "links":[["X","NV1","NV1","NV2",…],…]}
 * }</pre>
 *
 * Links use {@code nvidia-smi topo -m} tokens ({@link GpuLink#token()}); {@code numaNode} is omitted when unknown.
 * Decoding is strict: anything hetgpu would not have written is rejected with a message naming the field.
 * Whatever the text (any size, depth, number or key), decoding either returns a topology or throws
 * {@link InventoryFormatException}: one node's annotation must never fail a caller with anything else.
 *
 * <p>A node has at most {@value DeviceMask#MAX_DEVICES} GPUs: device sets are bit masks of a {@code long}
 * in the allocator the device plugin and the extender share. An inventory listing more is refused, naming
 * the limit, rather than read in part (the GPUs beyond 64 could not be allocated or told apart).
 */
public final class InventoryCodec {

    public static final int SCHEMA = 1;

    /**
     * Deepest nesting an annotation may have: hetgpu writes 3 levels ({@code links[i][j]}); the margin only
     * keeps the message about depth from hiding a more useful one. Deeper text is refused before it is
     * built into a tree.
     */
    static final int MAX_DEPTH = 16;

    private final ObjectMapper mapper = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build());

    public String encode(NodeTopology topology) {
        var root = mapper.createObjectNode();
        root.put("schema", SCHEMA);
        root.put("driverVersion", topology.driverVersion());
        root.put("cudaDriverVersion", topology.cudaDriverVersion());
        var devices = root.putArray("devices");
        for (var device : topology.devices()) {
            var entry = devices.addObject();
            entry.put("index", device.index());
            entry.put("uuid", device.uuid());
            entry.put("product", device.product());
            entry.put("model", device.model());
            entry.put("family", device.family().label());
            entry.put("computeCapability", device.computeCapability().toString());
            entry.put("memoryMiB", device.memoryMiB());
            entry.put("pciBusId", device.pciBusId());
            if (device.hasNumaNode()) {
                entry.put("numaNode", device.numaNode());
            }
            entry.put("health", device.health().label());
        }
        var links = root.putArray("links");
        for (int i = 0; i < topology.size(); i++) {
            ArrayNode row = links.addArray();
            for (int j = 0; j < topology.size(); j++) {
                row.add(i == j ? "X" : topology.links().link(i, j).token());
            }
        }
        return write(root);
    }

    public NodeTopology decode(String json) throws InventoryFormatException {
        try {
            return read(json);
        } catch (RuntimeException e) {
            // A case the checks below missed: still this annotation's fault, still one node's problem.
            throw new InventoryFormatException("gpu-inventory: unreadable (" + Quote.cut(e) + ")");
        }
    }

    private NodeTopology read(String json) throws InventoryFormatException {
        var root = JsonFields.root(parse(json, "gpu-inventory"), "gpu-inventory");
        long schema = root.integer("schema", 1);
        if (schema != SCHEMA) {
            throw new InventoryFormatException("schema: this hetgpu reads schema " + SCHEMA + ", got " + schema);
        }
        var entries = root.objects("devices");
        if (entries.size() > DeviceMask.MAX_DEVICES) {
            throw new InventoryFormatException("devices: " + entries.size() + " devices, but hetgpu handles at most "
                    + DeviceMask.MAX_DEVICES + " GPUs per node");
        }
        var devices = new ArrayList<GpuDevice>();
        for (var entry : entries) {
            devices.add(device(entry));
        }
        var links = links(root, devices.size());
        try {
            return new NodeTopology(root.text("driverVersion"), root.text("cudaDriverVersion"), devices, links);
        } catch (IllegalArgumentException e) {
            throw new InventoryFormatException("devices: " + e.getMessage());
        }
    }

    private static GpuDevice device(JsonFields entry) throws InventoryFormatException {
        var index = (int) entry.integer("index", 0, Integer.MAX_VALUE);
        var uuid = entry.text("uuid");
        var product = entry.text("product");
        var model = entry.text("model");
        var familyText = entry.text("family");
        var ccText = entry.text("computeCapability");
        var memory = entry.integer("memoryMiB", 1);
        var pciBusId = entry.text("pciBusId");
        var numa = entry.node().has("numaNode") ? (int) entry.integer("numaNode", 0, Integer.MAX_VALUE) : GpuDevice.NUMA_UNKNOWN;
        var healthText = entry.text("health");
        GpuArchitecture family;
        ComputeCapability cc;
        DeviceHealth health;
        try {
            family = GpuArchitecture.fromLabel(familyText);
        } catch (IllegalArgumentException e) {
            throw new InventoryFormatException(entry.at("family") + ": " + e.getMessage());
        }
        try {
            cc = ComputeCapability.parse(ccText);
        } catch (IllegalArgumentException e) {
            throw new InventoryFormatException(entry.at("computeCapability") + ": " + e.getMessage());
        }
        try {
            health = DeviceHealth.fromLabel(healthText);
        } catch (IllegalArgumentException e) {
            throw new InventoryFormatException(entry.at("health") + ": " + e.getMessage());
        }
        return new GpuDevice(uuid, index, product, model, family, cc, memory, pciBusId, numa, health);
    }

    private static LinkMatrix links(JsonFields root, int size) throws InventoryFormatException {
        JsonNode rowsNode = root.required("links");
        if (!rowsNode.isArray() || rowsNode.size() != size) {
            throw new InventoryFormatException("links: expected an array of " + size + " rows (one per device), got "
                    + JsonFields.describe(rowsNode));
        }
        var rows = new ArrayList<List<GpuLink>>();
        for (int i = 0; i < size; i++) {
            var tokens = root.strings(rowsNode.get(i), "links[" + i + "]");
            if (tokens.size() != size) {
                throw new InventoryFormatException("links[" + i + "]: expected " + size + " entries, got " + tokens.size());
            }
            var row = new ArrayList<GpuLink>();
            for (int j = 0; j < size; j++) {
                var token = tokens.get(j);
                if (i == j) {
                    if (!token.equals("X")) {
                        throw new InventoryFormatException("links[" + i + "][" + j + "]: the diagonal must be \"X\", got " + Quote.of(token));
                    }
                    row.add(null);
                    continue;
                }
                try {
                    row.add(GpuLink.parse(token));
                } catch (IllegalArgumentException e) {
                    throw new InventoryFormatException("links[" + i + "][" + j + "]: " + e.getMessage());
                }
            }
            rows.add(row);
        }
        try {
            return LinkMatrix.of(rows);
        } catch (IllegalArgumentException e) {
            throw new InventoryFormatException(e.getMessage());
        }
    }

    JsonNode parse(String json, String annotation) throws InventoryFormatException {
        if (json == null || json.isBlank()) {
            throw new InventoryFormatException(annotation + ": empty annotation");
        }
        try {
            return mapper.readTree(json);
        } catch (StreamConstraintsException e) {
            // Depth, number and string-length limits: reported without a location.
            throw new InventoryFormatException(annotation + ": " + (e.getMessage().contains("nesting depth")
                    ? "nested deeper than " + MAX_DEPTH + " levels" : firstLine(e.getOriginalMessage())));
        } catch (JsonProcessingException e) {
            var location = e.getLocation();
            throw new InventoryFormatException(annotation + ": not JSON" + (location == null ? ""
                    : " at line " + location.getLineNr() + ", column " + location.getColumnNr())
                    + ": " + firstLine(String.valueOf(e.getOriginalMessage())).replaceAll("\\s*\\(start marker.*", ""));
        }
    }

    /** The first line of a parser's message, at most 200 characters: it may quote the annotation. */
    private static String firstLine(String message) {
        var line = message.lines().findFirst().orElse("");
        return line.length() > 200 ? line.substring(0, 197) + "..." : line;
    }

    String write(ObjectNode root) {
        try {
            return mapper.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings and numbers always serialises", e);
        }
    }
}
