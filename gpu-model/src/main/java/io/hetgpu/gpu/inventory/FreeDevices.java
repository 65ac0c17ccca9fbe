package io.hetgpu.gpu.inventory;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code hetgpu.io/gpu-free} annotation: device IDs (UUIDs) no running pod holds, as read from
 * kubelet's PodResources API, and when they were read (so a reader can tell a stale answer).
 */
public record FreeDevices(Set<String> uuids, Instant readAt) {

    public FreeDevices {
        uuids = Set.copyOf(new TreeSet<>(uuids));
        Objects.requireNonNull(readAt, "readAt");
    }

    /** Sorted, for stable annotation text (a patch only when something really changed). */
    public List<String> sortedUuids() {
        return List.copyOf(new TreeSet<>(uuids));
    }
}
