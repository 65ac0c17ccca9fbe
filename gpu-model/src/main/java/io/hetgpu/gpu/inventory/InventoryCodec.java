package io.hetgpu.gpu.inventory;

import com.fasterxml.jackson.core.JsonProcessingException;
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
 */
public final class InventoryCodec {

    public static final int SCHEMA = 1;

    private final ObjectMapper mapper = new ObjectMapper();

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
        var root = JsonFields.root(parse(json, "gpu-inventory"), "gpu-inventory");
        long schema = root.integer("schema", 1);
        if (schema != SCHEMA) {
            throw new InventoryFormatException("schema: this hetgpu reads schema " + SCHEMA + ", got " + schema);
        }
        var devices = new ArrayList<GpuDevice>();
        for (var entry : root.objects("devices")) {
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
        var index = (int) entry.integer("index", 0);
        var uuid = entry.text("uuid");
        var product = entry.text("product");
        var model = entry.text("model");
        var familyText = entry.text("family");
        var ccText = entry.text("computeCapability");
        var memory = entry.integer("memoryMiB", 1);
        var pciBusId = entry.text("pciBusId");
        var numa = entry.node().has("numaNode") ? (int) entry.integer("numaNode", 0) : GpuDevice.NUMA_UNKNOWN;
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
                        throw new InventoryFormatException("links[" + i + "][" + j + "]: the diagonal must be \"X\", got \"" + token + "\"");
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
        } catch (JsonProcessingException e) {
            var location = e.getLocation();
            throw new InventoryFormatException(annotation + ": not JSON at line " + location.getLineNr() + ", column " + location.getColumnNr()
                    + ": " + e.getOriginalMessage().replaceAll("\\s*\\(start marker.*", ""));
        }
    }

    String write(ObjectNode root) {
        try {
            return mapper.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings and numbers always serialises", e);
        }
    }
}
