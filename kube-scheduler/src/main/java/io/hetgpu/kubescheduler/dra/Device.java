package io.hetgpu.kubescheduler.dra;

import java.util.Map;

/**
 * One device of a ResourceSlice as the allocator reads it.
 *
 * @param attributes qualified name ({@code productName}, or {@code resource.kubernetes.io/pcieRoot} with a domain) to value;
 *                   a name without a domain belongs to the slice's driver
 * @param capacity   qualified name to amount ({@code memory})
 */
public record Device(String name, Map<String, DeviceAttribute> attributes, Map<String, Quantity> capacity) {

    public Device {
        attributes = Map.copyOf(attributes);
        capacity = Map.copyOf(capacity);
    }
}
