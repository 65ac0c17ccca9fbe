package io.hetgpu.kubescheduler.dra;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Extended resources backed by DRA, as kube-scheduler's DRA plugin handles them (extendeddynamicresources.go): a plain
 * {@code nvidia.com/gpu} request on a node where no device plugin advertises it is served by the DeviceClass whose
 * {@code spec.extendedResourceName} names it (or by any class through {@code deviceclass.resource.kubernetes.io/<class>}),
 * through one claim the scheduler makes for the pod: a request {@code container-<i>-request-<j>} per container and
 * resource ({@code i} the container's index over init containers then containers, {@code j} the resource's index in the
 * container's sorted request names), each an exact count of devices of that class.
 *
 * <p>Init containers that are not sidecars run before the others and one at a time: each first reuses the requests of
 * the long-lived containers after it, asks for the rest itself, and only the largest such request is kept, the others'
 * mappings pointing at it.
 */
public final class ExtendedResourceClaim {

    private ExtendedResourceClaim() {
    }

    /** The name kube-scheduler gives the claim while it exists only in its memory. */
    public static final String IN_MEMORY_NAME = "<extended-resources>";
    public static final String ANNOTATION = "resource.kubernetes.io/extended-resource-claim";

    /**
     * One container's resource requests.
     *
     * @param init     listed under {@code initContainers}
     * @param sidecar  an init container with {@code restartPolicy: Always}
     * @param requests every requested resource (cpu and memory included: they count in the request's index) to amount
     */
    public record Container(String name, boolean init, boolean sidecar, Map<String, BigDecimal> requests) {

        public Container {
            requests = Map.copyOf(requests);
        }
    }

    /** {@code status.extendedResourceClaimStatus.requestMappings}: which request serves which container's resource. */
    public record Mapping(String containerName, String resourceName, String requestName) {
    }

    public sealed interface Outcome {
    }

    /** Nothing on this node goes through DRA: no such resource, or device plugins serve them all. */
    public record NotNeeded() implements Outcome {
    }

    /** The claim the pod needs on this node, and the mappings kube-scheduler writes on the pod at PreBind. */
    public record Needed(Claim claim, List<Mapping> mappings) implements Outcome {

        public Needed {
            mappings = List.copyOf(mappings);
        }
    }

    /** The node neither advertises the resource nor has a class for it. */
    public record DoesNotFit(String reason) implements Outcome {
    }

    /** Whether a resource name can be backed by DRA: an extended resource, or a class's implicit name. */
    public static boolean isExtendedResourceName(String name) {
        if (name.startsWith(DeviceClass.IMPLICIT_EXTENDED_RESOURCE_PREFIX)) {
            return true;
        }
        var slash = name.indexOf('/');
        if (slash <= 0 || name.startsWith("requests.")) {
            return false;
        }
        var domain = name.substring(0, slash);
        return !domain.equals("kubernetes.io") && !domain.endsWith(".kubernetes.io");
    }

    /**
     * The class serving a resource: with several, the last in the list (the informer's latest event wins in
     * kube-scheduler's cache, and callers list classes oldest first).
     */
    public static Optional<DeviceClass> classFor(String resourceName, List<DeviceClass> classes) {
        DeviceClass found = null;
        for (var deviceClass : classes) {
            if (deviceClass.serves(resourceName)) {
                found = deviceClass;
            }
        }
        return Optional.ofNullable(found);
    }

    /**
     * The request NodeResourcesFit checks on a node: an extended resource the node does not advertise but a class serves
     * is left to the DRA plugin (kube-scheduler's fit.go skips it when the DRA extended resource feature is on).
     */
    public static io.hetgpu.kubescheduler.ResourceRequest fitRequest(io.hetgpu.kubescheduler.ResourceRequest request,
            Map<String, BigDecimal> allocatable, List<DeviceClass> classes) {
        var kept = new java.util.LinkedHashMap<String, BigDecimal>();
        request.amounts().forEach((name, amount) -> {
            var onNode = allocatable.get(name);
            var leftToDra = isExtendedResourceName(name) && amount.signum() > 0 && (onNode == null || onNode.signum() == 0)
                    && classFor(name, classes).isPresent();
            if (!leftToDra) {
                kept.put(name, amount);
            }
        });
        return kept.size() == request.amounts().size() ? request : new io.hetgpu.kubescheduler.ResourceRequest(kept);
    }

    /**
     * The claim a pod needs on a node.
     *
     * @param podRequests the pod's effective requests ({@code ResourceRequest}: containers summed, init containers' maximum)
     * @param allocatable the node's allocatable resources; a resource it lists with a positive amount is a device plugin's
     */
    public static Outcome forNode(String namespace, List<Container> containers, Map<String, BigDecimal> podRequests,
            Map<String, BigDecimal> allocatable, List<DeviceClass> classes) {
        var throughDra = new TreeSet<String>();
        for (var entry : new java.util.TreeMap<>(podRequests).entrySet()) {
            var name = entry.getKey();
            if (!isExtendedResourceName(name) || entry.getValue().signum() == 0) {
                continue;
            }
            var onNode = allocatable.get(name);
            var backed = classFor(name, classes).isPresent();
            if (backed && (onNode == null || onNode.signum() == 0)) {
                throughDra.add(name);
            } else if (onNode == null) {
                return new DoesNotFit("cannot fit resource " + Quotes.quote(name) + ": no device plugin advertises it and no DeviceClass serves it");
            }
        }
        if (throughDra.isEmpty()) {
            return new NotNeeded();
        }
        var requests = new ArrayList<DeviceRequest.Exactly>();
        var mappings = new ArrayList<Mapping>();
        for (var resource : throughDra) {
            var className = classFor(resource, classes).orElseThrow().name();
            var longLived = new DeviceRequest.Exactly[containers.size()];
            var longLivedMappings = new ArrayList<Mapping>();
            for (int i = 0; i < containers.size(); i++) {
                var c = containers.get(i);
                if (c.init() && !c.sidecar()) {
                    continue;
                }
                var made = requestFor(i, c, resource, className, List.of());
                longLived[i] = made.request();
                longLivedMappings.addAll(made.mappings());
            }
            DeviceRequest.Exactly largestShortLived = null;
            var shortLivedNames = new TreeSet<String>();
            var shortLivedMappings = new ArrayList<Mapping>();
            for (int i = 0; i < containers.size(); i++) {
                var c = containers.get(i);
                if (!c.init() || c.sidecar()) {
                    continue;
                }
                var reusable = java.util.Arrays.asList(longLived).subList(i, longLived.length);
                var made = requestFor(i, c, resource, className, reusable);
                if (made.request() != null) {
                    shortLivedNames.add(made.request().name());
                    if (largestShortLived == null || largestShortLived.request().count() < made.request().request().count()) {
                        largestShortLived = made.request();
                    }
                }
                shortLivedMappings.addAll(made.mappings());
            }
            if (largestShortLived != null && shortLivedNames.size() > 1) {
                var keep = largestShortLived.name();
                shortLivedMappings.replaceAll(m -> shortLivedNames.contains(m.requestName()) && !m.requestName().equals(keep)
                        ? new Mapping(m.containerName(), m.resourceName(), keep) : m);
            }
            if (largestShortLived != null) {
                requests.add(largestShortLived);
            }
            for (var request : longLived) {
                if (request != null) {
                    requests.add(request);
                }
            }
            mappings.addAll(longLivedMappings);
            mappings.addAll(shortLivedMappings);
        }
        requests.sort(Comparator.comparing(DeviceRequest.Exactly::name));
        return new Needed(new Claim(namespace, IN_MEMORY_NAME, List.copyOf(requests)), mappings);
    }

    private record Made(DeviceRequest.Exactly request, List<Mapping> mappings) {
    }

    private static Made requestFor(int index, Container container, String resource, String className, List<DeviceRequest.Exactly> reusable) {
        var amount = container.requests().get(resource);
        if (amount == null || amount.signum() <= 0 || amount.stripTrailingZeros().scale() > 0) {
            return new Made(null, List.of());
        }
        long wanted;
        try {
            wanted = amount.longValueExact();
        } catch (ArithmeticException e) {
            return new Made(null, List.of());
        }
        var mappings = new ArrayList<Mapping>();
        long sum = 0;
        for (var other : reusable) {
            if (other == null) {
                continue;
            }
            sum += other.request().count();
            mappings.add(new Mapping(container.name(), resource, other.name()));
            if (sum >= wanted) {
                return new Made(null, mappings);
            }
        }
        var names = new TreeSet<>(container.requests().keySet());
        var position = names.headSet(resource).size();
        var name = "container-" + index + "-request-" + position;
        var request = new DeviceRequest.Exactly(name, ExactRequest.count(className, wanted - sum));
        mappings.add(new Mapping(container.name(), resource, name));
        return new Made(request, mappings);
    }
}
