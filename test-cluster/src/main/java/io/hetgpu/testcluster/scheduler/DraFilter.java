package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.ClaimAllocation;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * kube-scheduler's DynamicResources plugin for one pod on one node, over a {@link DraSnapshot}: the pod's claims found
 * (a template's claim through {@code status.resourceClaimStatuses}), those already allocated kept where their allocation
 * ties them, the others (and the claim for extended resources backed by DRA) allocated by the model of its allocator.
 */
public final class DraFilter {

    /** What the plugin says of the node. */
    public sealed interface Verdict {
    }

    /** The pod has nothing for the DRA plugin. */
    public record NotDra() implements Verdict {
    }

    /**
     * The node fits: the allocations to write at Reserve and PreBind (empty when every claim was allocated before), the
     * claims allocated before that the pod is to be added to the {@code reservedFor} of, the claim for extended
     * resources with its mappings when the pod has one on this node, and the node's raw score for prioritized lists
     * ({@link PrioritizedListScore#raw}) over the claims allocated here.
     */
    public record Fits(List<ClaimAllocation> allocations, List<String> alreadyAllocated, Optional<ExtendedResourceClaim.Needed> extended,
                       long prioritizedListScore) implements Verdict {
        public Fits {
            allocations = List.copyOf(allocations);
            alreadyAllocated = List.copyOf(alreadyAllocated);
        }
    }

    /** The node does not fit; {@code unresolvable} when no node can until something else changes (a claim not yet made). */
    public record Refused(String reason, boolean unresolvable) implements Verdict {
    }

    private final StructuredAllocator allocator;

    public DraFilter(DraLimits limits) {
        this.allocator = new StructuredAllocator(limits);
    }

    /** Whether the pod names claims, or asks for an extended resource some DeviceClass serves. */
    public static boolean usesDra(Pod pod, DraSnapshot dra) {
        if (!podClaims(pod).isEmpty()) {
            return true;
        }
        var classes = List.copyOf(dra.classes().values());
        return !classes.isEmpty() && ApiObjects.request(pod).amounts().keySet().stream()
                .anyMatch(name -> ExtendedResourceClaim.classFor(name, classes).isPresent());
    }

    /** NodeResourcesFit's view of the pod on the node: extended resources left to DRA there are not its to check. */
    public static ResourceRequest fitRequest(ResourceRequest request, SchedulingNode node, DraSnapshot dra) {
        return dra.classes().isEmpty() ? request : ExtendedResourceClaim.fitRequest(request, node.allocatable(), List.copyOf(dra.classes().values()));
    }

    public Verdict judge(Pod pod, SchedulingNode node, DraSnapshot dra) {
        var entries = podClaims(pod);
        var toAllocate = new ArrayList<Claim>();
        var alreadyAllocated = new ArrayList<String>();
        for (var entry : entries) {
            var claimName = claimName(pod, entry);
            if (claimName.isEmpty()) {
                return new Refused("waiting for the resourceclaim of " + DraObjects.quote(entry.getName()) + " to be created", true);
            }
            if (claimName.get().isEmpty()) {
                continue;
            }
            var key = pod.getMetadata().getNamespace() + "/" + claimName.get();
            var inRound = dra.allocatedInRound().get(key);
            if (inRound != null) {
                if (!inRound.isEmpty() && !inRound.equals(node.name())) {
                    return new Refused("resourceclaim " + DraObjects.quote(claimName.get()) + " is allocated on another node", false);
                }
                alreadyAllocated.add(claimName.get());
                continue;
            }
            var claim = dra.claims().get(key);
            if (claim == null) {
                return new Refused("resourceclaim " + DraObjects.quote(claimName.get()) + " not found", true);
            }
            if (!DraObjects.allocatedDevices(claim).isEmpty() || (claim.getStatus() != null && claim.getStatus().getAllocation() != null)) {
                var tied = DraObjects.allocatedNode(claim);
                if (tied.isPresent() && !tied.get().equals(node.name())) {
                    return new Refused("resourceclaim " + DraObjects.quote(claimName.get()) + " is allocated on another node", false);
                }
                alreadyAllocated.add(claimName.get());
                continue;
            }
            switch (DraObjects.claim(claim)) {
                case DraObjects.ClaimReading.Read read -> toAllocate.add(read.claim());
                case DraObjects.ClaimReading.Unreadable unreadable -> {
                    return new Refused(unreadable.reason(), true);
                }
            }
        }
        Optional<ExtendedResourceClaim.Needed> extended = Optional.empty();
        if (!dra.classes().isEmpty()) {
            var outcome = ExtendedResourceClaim.forNode(pod.getMetadata().getNamespace(), containers(pod),
                    ApiObjects.request(pod).amounts(), node.allocatable(), List.copyOf(dra.classes().values()));
            switch (outcome) {
                case ExtendedResourceClaim.NotNeeded notNeeded -> { }
                case ExtendedResourceClaim.DoesNotFit doesNotFit -> {
                    return new Refused(doesNotFit.reason(), false);
                }
                case ExtendedResourceClaim.Needed needed -> {
                    extended = Optional.of(needed);
                    toAllocate.add(needed.claim());
                }
            }
        }
        if (entries.isEmpty() && extended.isEmpty()) {
            return new NotDra();
        }
        if (toAllocate.isEmpty()) {
            return new Fits(List.of(), alreadyAllocated, Optional.empty(), 0);
        }
        return switch (allocator.allocate(node.name(), dra.slices(), dra.classes(), dra.allocated(), toAllocate)) {
            case AllocationOutcome.Allocated allocated -> new Fits(allocated.claims(), alreadyAllocated, extended,
                    PrioritizedListScore.raw(toAllocate, allocated.claims()));
            case AllocationOutcome.Unallocatable unallocatable -> new Refused(unallocatable.reason(), false);
        };
    }

    static List<PodResourceClaim> podClaims(Pod pod) {
        return Objects.requireNonNullElse(pod.getSpec().getResourceClaims(), List.of());
    }

    /**
     * The claim an entry of {@code spec.resourceClaims} names: its {@code resourceClaimName}, or the one the claim controller
     * made from its template ("" when it decided none is needed); empty while the controller has not made it.
     */
    static Optional<String> claimName(Pod pod, PodResourceClaim entry) {
        if (entry.getResourceClaimName() != null && !entry.getResourceClaimName().isEmpty()) {
            return Optional.of(entry.getResourceClaimName());
        }
        var statuses = pod.getStatus() == null ? List.<PodResourceClaimStatus>of()
                : Objects.requireNonNullElse(pod.getStatus().getResourceClaimStatuses(), List.<PodResourceClaimStatus>of());
        return statuses.stream().filter(s -> Objects.equals(s.getName(), entry.getName())).findFirst()
                .map(s -> Objects.requireNonNullElse(s.getResourceClaimName(), ""));
    }

    private static List<ExtendedResourceClaim.Container> containers(Pod pod) {
        var out = new ArrayList<ExtendedResourceClaim.Container>();
        for (var c : Objects.requireNonNullElse(pod.getSpec().getInitContainers(), List.<Container>of())) {
            out.add(new ExtendedResourceClaim.Container(c.getName(), true, "Always".equals(c.getRestartPolicy()), requests(c)));
        }
        for (var c : Objects.requireNonNullElse(pod.getSpec().getContainers(), List.<Container>of())) {
            out.add(new ExtendedResourceClaim.Container(c.getName(), false, false, requests(c)));
        }
        return out;
    }

    private static Map<String, BigDecimal> requests(Container container) {
        var resources = container.getResources();
        if (resources == null) {
            return Map.of();
        }
        // A limit alone is the request, as for every other resource.
        var amounts = new java.util.HashMap<String, BigDecimal>();
        Objects.requireNonNullElse(resources.getLimits(), Map.<String, io.fabric8.kubernetes.api.model.Quantity>of())
                .forEach((name, q) -> amounts.put(name, q.getNumericalAmount()));
        Objects.requireNonNullElse(resources.getRequests(), Map.<String, io.fabric8.kubernetes.api.model.Quantity>of())
                .forEach((name, q) -> amounts.put(name, q.getNumericalAmount()));
        return amounts.entrySet().stream().collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));
    }
}
