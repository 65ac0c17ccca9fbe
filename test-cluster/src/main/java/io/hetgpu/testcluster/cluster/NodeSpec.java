package io.hetgpu.testcluster.cluster;

import java.util.Objects;
import java.util.Optional;

/**
 * One node of a test cluster.
 *
 * @param name     node name
 * @param rack     value of {@code topology.hetgpu.io/rack}
 * @param zone     value of {@code topology.kubernetes.io/zone}
 * @param profile  the simulated GPU profile its device plugin runs with; empty for a CPU-only node
 * @param cpus     allocatable CPU cores
 * @param memoryGi allocatable memory in GiB
 */
public record NodeSpec(String name, String rack, String zone, Optional<String> profile, int cpus, int memoryGi) {

    public NodeSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(rack, "rack");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(profile, "profile");
    }

    public static NodeSpec gpu(String name, String rack, String zone, String profile) {
        return new NodeSpec(name, rack, zone, Optional.of(profile), 96, 768);
    }

    public static NodeSpec cpu(String name, String rack, String zone) {
        return new NodeSpec(name, rack, zone, Optional.empty(), 64, 256);
    }

    public boolean hasGpus() {
        return profile.isPresent();
    }
}
