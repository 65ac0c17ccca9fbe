package io.hetgpu.extender.model;

import java.util.Set;

/**
 * Where a volume's data lives: nodes, racks or zones (any of which may be empty).
 * From a PV's node affinity or the {@code hetgpu.io/data-locality} annotation.
 */
public record DataLocality(Set<String> nodes, Set<String> racks, Set<String> zones) {

    public DataLocality {
        nodes = Set.copyOf(nodes);
        racks = Set.copyOf(racks);
        zones = Set.copyOf(zones);
    }

    public boolean isEmpty() {
        return nodes.isEmpty() && racks.isEmpty() && zones.isEmpty();
    }
}
