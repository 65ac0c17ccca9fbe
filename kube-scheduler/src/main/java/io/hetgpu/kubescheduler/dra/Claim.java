package io.hetgpu.kubescheduler.dra;

import java.util.List;

/** A ResourceClaim's {@code spec.devices} as the allocator reads it (configuration aside: it does not choose). */
public record Claim(String namespace, String name, List<DeviceRequest> requests, List<MatchAttribute> constraints) {

    public Claim {
        requests = List.copyOf(requests);
        constraints = List.copyOf(constraints);
    }

    public Claim(String namespace, String name, List<DeviceRequest> requests) {
        this(namespace, name, requests, List.of());
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
