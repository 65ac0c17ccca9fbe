package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pod's effective resource request as kube-scheduler computes it: the sum over its containers, or
 * the largest init container if that is more, per resource. Extended resources such as
 * {@code nvidia.com/gpu} are requested through limits alone, which then count as requests.
 */
public record ResourceRequest(Map<String, BigDecimal> amounts) {

    public ResourceRequest {
        amounts = Map.copyOf(amounts);
    }

    public static ResourceRequest of(Pod pod) {
        var total = sum(pod.getSpec().getContainers());
        var initContainers = pod.getSpec().getInitContainers();
        if (initContainers != null) {
            for (var init : initContainers) {
                sum(List.of(init)).forEach((name, amount) -> total.merge(name, amount, BigDecimal::max));
            }
        }
        return new ResourceRequest(total);
    }

    public BigDecimal get(String resource) {
        return amounts.getOrDefault(resource, BigDecimal.ZERO);
    }

    public boolean requests(String resource) {
        return get(resource).signum() > 0;
    }

    private static Map<String, BigDecimal> sum(List<Container> containers) {
        var total = new HashMap<String, BigDecimal>();
        for (var container : containers) {
            var resources = container.getResources();
            if (resources == null) {
                continue;
            }
            var requests = resources.getRequests() == null ? Map.<String, Quantity>of() : resources.getRequests();
            var limits = resources.getLimits() == null ? Map.<String, Quantity>of() : resources.getLimits();
            var names = new java.util.HashSet<>(requests.keySet());
            names.addAll(limits.keySet());
            for (var name : names) {
                var quantity = requests.containsKey(name) ? requests.get(name) : limits.get(name);
                total.merge(name, quantity.getNumericalAmount(), BigDecimal::add);
            }
        }
        return total;
    }
}
