package io.hetgpu.kubescheduler;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pod's effective resource request as kube-scheduler computes it ({@code resource.PodRequests}): the
 * sum over its containers, or the largest init container if that is more, per resource. Extended
 * resources such as {@code nvidia.com/gpu} are requested through limits alone, which then count as
 * requests.
 *
 * @param amounts resource name to amount in the resource's base unit (cores, bytes, devices)
 */
public record ResourceRequest(Map<String, BigDecimal> amounts) {

    public static final ResourceRequest NONE = new ResourceRequest(Map.of());

    public ResourceRequest {
        amounts = Map.copyOf(amounts);
    }

    /** One container's {@code resources}: its requests and limits, by resource name. */
    public record Container(Map<String, BigDecimal> requests, Map<String, BigDecimal> limits) {

        public Container {
            requests = Map.copyOf(requests);
            limits = Map.copyOf(limits);
        }

        /** A request where one is given, else the limit (which kube-scheduler then takes as the request). */
        Map<String, BigDecimal> effective() {
            var effective = new HashMap<>(limits);
            effective.putAll(requests);
            return effective;
        }
    }

    public static ResourceRequest of(List<Container> containers, List<Container> initContainers) {
        var total = new HashMap<String, BigDecimal>();
        for (var container : containers) {
            container.effective().forEach((name, amount) -> total.merge(name, amount, BigDecimal::add));
        }
        for (var init : initContainers) {
            init.effective().forEach((name, amount) -> total.merge(name, amount, BigDecimal::max));
        }
        return new ResourceRequest(total);
    }

    public BigDecimal get(String resource) {
        return amounts.getOrDefault(resource, BigDecimal.ZERO);
    }

    public boolean requests(String resource) {
        return get(resource).signum() > 0;
    }

    public ResourceRequest plus(ResourceRequest other) {
        var total = new HashMap<>(amounts);
        other.amounts.forEach((name, amount) -> total.merge(name, amount, BigDecimal::add));
        return new ResourceRequest(total);
    }
}
