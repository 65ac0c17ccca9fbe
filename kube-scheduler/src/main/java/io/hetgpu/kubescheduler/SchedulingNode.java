package io.hetgpu.kubescheduler;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/**
 * What kube-scheduler's filters and default scorers read of a Node.
 *
 * @param allocatable resource name to amount in its base unit (cores, bytes, pods, devices)
 */
public record SchedulingNode(String name, boolean unschedulable, Map<String, String> labels, List<Taint> taints,
                             Map<String, BigDecimal> allocatable) {

    public SchedulingNode {
        labels = Map.copyOf(labels);
        taints = List.copyOf(taints);
        allocatable = Map.copyOf(allocatable);
    }

    public BigDecimal allocatable(String resource) {
        return allocatable.getOrDefault(resource, BigDecimal.ZERO);
    }

    /** A taint as {@code spec.taints} lists it; {@code value} may be empty. */
    public record Taint(String key, String value, String effect) {
    }
}
