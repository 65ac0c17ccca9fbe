package io.hetgpu.gpu.inventory;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.gpu.Quote;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashSet;

/** JSON of the {@code hetgpu.io/gpu-free} annotation: {@code {"devices":["GPU-…",…],"readAt":"2026-11-21T17:20:00Z"}}. */
public final class FreeDevicesCodec {

    private final InventoryCodec json = new InventoryCodec();
    private final ObjectMapper mapper = new ObjectMapper();

    public String encode(FreeDevices free) {
        var root = mapper.createObjectNode();
        var devices = root.putArray("devices");
        free.sortedUuids().forEach(devices::add);
        root.put("readAt", free.readAt().toString());
        return json.write(root);
    }

    /** The free list, or {@link InventoryFormatException} for any text that is not one (never another exception). */
    public FreeDevices decode(String text) throws InventoryFormatException {
        try {
            return read(text);
        } catch (RuntimeException e) {
            throw new InventoryFormatException("gpu-free: unreadable (" + Quote.cut(e) + ")");
        }
    }

    private FreeDevices read(String text) throws InventoryFormatException {
        var root = JsonFields.root(json.parse(text, "gpu-free"), "gpu-free");
        var uuids = root.strings(root.required("devices"), "devices");
        for (int i = 0; i < uuids.size(); i++) {
            if (uuids.get(i).isBlank()) {
                throw new InventoryFormatException("devices[" + i + "]: expected a device ID, got \"\"");
            }
        }
        var readAtText = root.text("readAt");
        try {
            return new FreeDevices(new HashSet<>(uuids), Instant.parse(readAtText));
        } catch (DateTimeParseException e) {
            throw new InventoryFormatException("readAt: expected an RFC 3339 UTC time such as 2026-11-21T17:20:00Z, got " + Quote.of(readAtText));
        }
    }
}
