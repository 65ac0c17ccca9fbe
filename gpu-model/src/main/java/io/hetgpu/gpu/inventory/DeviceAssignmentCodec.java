package io.hetgpu.gpu.inventory;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.gpu.Quote;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashSet;

/**
 * JSON of the {@code hetgpu.io/gpu-devices} pod annotation:
 * {@code {"node":"dgx-a100-1","devices":["GPU-…",…],"boundAt":"2026-11-22T14:05:00.123456Z","sig":"…"}}, where
 * {@code sig} (the extender's signature) is written only when there is one and may be absent on reading.
 */
public final class DeviceAssignmentCodec {

    private final InventoryCodec json = new InventoryCodec();
    private final ObjectMapper mapper = new ObjectMapper();

    public String encode(DeviceAssignment assignment) {
        var root = mapper.createObjectNode();
        root.put("node", assignment.node());
        var devices = root.putArray("devices");
        assignment.devices().forEach(devices::add);
        root.put("boundAt", assignment.boundAt().toString());
        if (!assignment.signature().isEmpty()) {
            root.put("sig", assignment.signature());
        }
        return json.write(root);
    }

    /** The assignment, or {@link InventoryFormatException} naming the field for any text that is not one (never another exception). */
    public DeviceAssignment decode(String text) throws InventoryFormatException {
        try {
            return read(text);
        } catch (RuntimeException e) {
            throw new InventoryFormatException("gpu-devices: unreadable (" + Quote.cut(e) + ")");
        }
    }

    private DeviceAssignment read(String text) throws InventoryFormatException {
        var root = JsonFields.root(json.parse(text, "gpu-devices"), "gpu-devices");
        var node = root.text("node");
        var devices = root.strings(root.required("devices"), "devices");
        var seen = new HashSet<String>();
        for (int i = 0; i < devices.size(); i++) {
            if (devices.get(i).isBlank()) {
                throw new InventoryFormatException("devices[" + i + "]: expected a device ID, got \"\"");
            }
            if (!seen.add(devices.get(i))) {
                throw new InventoryFormatException("devices[" + i + "]: device " + Quote.of(devices.get(i)) + " listed twice");
            }
        }
        var boundAtText = root.text("boundAt");
        var signature = root.node().get("sig");
        if (signature != null && !signature.isTextual()) {
            throw new InventoryFormatException("sig: expected a string, got " + JsonFields.describe(signature));
        }
        try {
            return new DeviceAssignment(node, devices, Instant.parse(boundAtText), signature == null ? "" : signature.asText());
        } catch (DateTimeParseException e) {
            throw new InventoryFormatException("boundAt: expected an RFC 3339 UTC time such as 2026-11-22T14:05:00Z, got " + Quote.of(boundAtText));
        }
    }
}
