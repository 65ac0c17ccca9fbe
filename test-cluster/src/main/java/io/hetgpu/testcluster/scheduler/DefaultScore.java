package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's default scoring as far as it shapes GPU placement: NodeResourcesFit with the
 * LeastAllocated strategy over cpu and memory, plus NodeResourcesBalancedAllocation. Both spread pods
 * over the emptiest nodes, which is what a cluster without hetgpu does. Scores are 0..100 each.
 */
public final class DefaultScore {

    private static final List<String> RESOURCES = List.of("cpu", "memory");

    private DefaultScore() {
    }

    public static long score(Pod pod, Node node, List<Pod> podsOnNode) {
        var allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null
                ? Map.<String, Quantity>of() : node.getStatus().getAllocatable();
        var request = ResourceRequest.of(pod);
        double leastAllocated = 0;
        double[] fractions = new double[RESOURCES.size()];
        for (int i = 0; i < RESOURCES.size(); i++) {
            var resource = RESOURCES.get(i);
            var capacity = allocatable.containsKey(resource) ? allocatable.get(resource).getNumericalAmount() : BigDecimal.ZERO;
            if (capacity.signum() == 0) {
                continue;
            }
            var used = podsOnNode.stream().map(p -> ResourceRequest.of(p).get(resource)).reduce(request.get(resource), BigDecimal::add);
            double fraction = Math.min(1.0, used.divide(capacity, MathContext.DECIMAL64).doubleValue());
            fractions[i] = fraction;
            leastAllocated += (1.0 - fraction) * 100;
        }
        leastAllocated /= RESOURCES.size();
        double mean = (fractions[0] + fractions[1]) / 2;
        double deviation = Math.sqrt((Math.pow(fractions[0] - mean, 2) + Math.pow(fractions[1] - mean, 2)) / 2);
        double balanced = (1 - deviation) * 100;
        return Math.round(leastAllocated) + Math.round(balanced);
    }
}
