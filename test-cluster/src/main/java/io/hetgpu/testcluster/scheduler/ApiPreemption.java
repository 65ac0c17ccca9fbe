package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.hetgpu.kubescheduler.SchedulingPod;
import io.hetgpu.kubescheduler.filter.NodeFit;
import io.hetgpu.kubescheduler.preemption.ClaimRelease;
import io.hetgpu.kubescheduler.preemption.VictimSelection;
import io.hetgpu.kubescheduler.preemption.CandidateSampling;
import io.hetgpu.kubescheduler.preemption.DefaultPreemption;
import io.hetgpu.kubescheduler.preemption.RunningPod;
import io.hetgpu.kubescheduler.preemption.Victims;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * kube-scheduler's PostFilter for a pod no node took, over the API's objects: the kube-scheduler model's
 * {@link DefaultPreemption} decides (a DRA pod's fit re-checked with the devices its victims' claims release), each interested extender with a preempt verb
 * called over HTTP to prune the candidates. What is returned is applied by the driver.
 */
final class ApiPreemption {

    /** The node chosen and its victims, or why there is none. */
    sealed interface Outcome {
        record Nominate(String node, List<Pod> victims) implements Outcome {
        }

        record None(String why) implements Outcome {
        }
    }

    private final List<? extends SchedulerExtender> extenders;
    private final DefaultPreemption model;
    private final boolean releasingClaims;

    ApiPreemption(List<? extends SchedulerExtender> extenders, Random offsets) {
        this(extenders, offsets, false);
    }

    /** @param releasingClaims kube-scheduler's {@code DRAPreemption} feature gate (beta from 1.38; none through 1.37) */
    ApiPreemption(List<? extends SchedulerExtender> extenders, Random offsets, boolean releasingClaims) {
        this.releasingClaims = releasingClaims;
        this.extenders = List.copyOf(extenders);
        this.model = new DefaultPreemption(CandidateSampling.DEFAULTS, offsets);
    }

    Outcome preempt(Pod pod, List<Node> nodes, Map<String, List<Pod>> podsByNode, Set<String> unresolvable,
                    List<PodDisruptionBudget> budgets) {
        return preempt(pod, nodes, podsByNode, unresolvable, budgets, DraSnapshot.EMPTY, null);
    }

    /**
     * The same in a cluster with DRA objects: on each candidate node the DynamicResources plugin checks the preemptor
     * again, with the devices of the claims the victims release counted free ({@link ClaimRelease}) where the
     * {@code DRAPreemption} gate is on, else with every allocated device held (the plugin has no RemovePod).
     *
     * @param draFilter the scheduler's DynamicResources plugin; null where the pod uses no DRA
     */
    Outcome preempt(Pod pod, List<Node> nodes, Map<String, List<Pod>> podsByNode, Set<String> unresolvable,
                    List<PodDisruptionBudget> budgets, DraSnapshot dra, DraFilter draFilter) {
        var preemptor = ApiObjects.preemptor(pod);
        var running = new HashMap<String, List<RunningPod>>();
        var byUid = new HashMap<String, Pod>();
        podsByNode.forEach((node, pods) -> {
            running.put(node, pods.stream().map(ApiObjects::running).toList());
            pods.forEach(p -> byUid.put(p.getMetadata().getUid(), p));
        });
        var verbs = new ArrayList<DefaultPreemption.Extender>();
        for (var extender : extenders) {
            if (extender.settings().preempts() && extender.isInterested(pod)) {
                verbs.add(candidates -> {
                    try {
                        return applyAnswer(extender.preempt(pod, victimPods(candidates, byUid), violations(candidates)), running);
                    } catch (ExtenderCallException e) {
                        if (extender.settings().ignorable()) {
                            return candidates;
                        }
                        throw new DefaultPreemption.Refusal(
                                "extender " + extender.settings().urlPrefix() + ": " + e.getMessage());
                    }
                });
            }
        }
        var usesDra = draFilter != null && dra.inUse() && DraFilter.usesDra(pod, dra);
        var claims = usesDra && releasingClaims ? allocatedClaims(dra, podsByNode) : List.<ClaimRelease.AllocatedClaim>of();
        VictimSelection.Fit fit = (node, left) -> {
            var asScheduled = preemptor.pod();
            var fitting = dra.classes().isEmpty() ? asScheduled : new SchedulingPod(asScheduled.nodeName(), asScheduled.nodeSelector(),
                    asScheduled.tolerations(), DraFilter.fitRequest(asScheduled.request(), node, dra));
            if (!NodeFit.check(fitting, node, left.stream().map(RunningPod::request).toList()).isEmpty()) {
                return false;
            }
            if (!usesDra) {
                return true;
            }
            var evicted = new HashSet<String>();
            running.getOrDefault(node.name(), List.of()).forEach(p -> evicted.add(p.uid()));
            left.forEach(p -> evicted.remove(p.uid()));
            var released = new DraSnapshot(dra.slices(), dra.classes(), dra.claims(), ClaimRelease.allocatedAfter(dra.allocated(), claims, evicted),
                    dra.allocatedInRound());
            return !(draFilter.judge(pod, node, released) instanceof DraFilter.Refused);
        };
        var outcome = model.preempt(preemptor, nodes.stream().map(ApiObjects::node).toList(), running, unresolvable,
                budgets.stream().map(ApiObjects::budget).toList(), fit, verbs);
        return switch (outcome) {
            case DefaultPreemption.Outcome.None none -> new Outcome.None(none.why());
            case DefaultPreemption.Outcome.Nominate nominate -> new Outcome.Nominate(nominate.node(),
                    nominate.victims().pods().stream().map(victim -> byUid.get(victim.uid())).toList());
        };
    }

    /**
     * Every allocated claim of the snapshot as the dry run weighs it: its devices, the pods (and other consumers) it is
     * reserved for, and the bound pods whose {@code spec.resourceClaims} name it.
     */
    static List<ClaimRelease.AllocatedClaim> allocatedClaims(DraSnapshot dra, Map<String, List<Pod>> podsByNode) {
        var namedBy = new HashMap<String, Set<String>>();
        podsByNode.values().forEach(pods -> pods.forEach(pod -> {
            for (var entry : DraFilter.podClaims(pod)) {
                DraFilter.claimName(pod, entry).filter(name -> !name.isEmpty()).ifPresent(name -> namedBy.computeIfAbsent(
                        pod.getMetadata().getNamespace() + "/" + name, key -> new HashSet<>()).add(pod.getMetadata().getUid()));
            }
        }));
        var claims = new ArrayList<ClaimRelease.AllocatedClaim>();
        dra.claims().forEach((key, claim) -> {
            var devices = DraObjects.allocatedDevices(claim);
            if (devices.isEmpty()) {
                return;
            }
            var reservedPods = new HashSet<String>();
            boolean other = false;
            var reserved = claim.getStatus().getReservedFor();
            for (var consumer : reserved == null ? List.<io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference>of() : reserved) {
                if ("pods".equals(consumer.getResource()) && (consumer.getApiGroup() == null || consumer.getApiGroup().isEmpty())) {
                    reservedPods.add(Objects.requireNonNullElse(consumer.getUid(), ""));
                } else {
                    other = true;
                }
            }
            claims.add(new ClaimRelease.AllocatedClaim(Set.copyOf(devices), reservedPods, other, namedBy.getOrDefault(key, Set.of())));
        });
        return claims;
    }

    private static Map<String, List<Pod>> victimPods(Map<String, Victims> candidates, Map<String, Pod> byUid) {
        var pods = new LinkedHashMap<String, List<Pod>>();
        candidates.forEach((node, victims) -> pods.put(node, victims.pods().stream().map(victim -> byUid.get(victim.uid())).toList()));
        return pods;
    }

    private static Map<String, Long> violations(Map<String, Victims> candidates) {
        return candidates.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> (long) e.getValue().pdbViolations()));
    }

    /** kube-scheduler's convertToVictims: the extender's UIDs looked up among the node's pods, most important first. */
    private static Map<String, Victims> applyAnswer(Map<String, Map.Entry<List<String>, Long>> answer, Map<String, List<RunningPod>> running) {
        var kept = new LinkedHashMap<String, Victims>();
        answer.forEach((node, victims) -> {
            var uids = Set.copyOf(victims.getKey());
            var pods = new ArrayList<>(Objects.requireNonNullElse(running.get(node), List.<RunningPod>of()).stream()
                    .filter(pod -> uids.contains(pod.uid())).toList());
            pods.sort(RunningPod::moreImportantFirst);
            kept.put(node, new Victims(pods, victims.getValue().intValue()));
        });
        return kept;
    }
}
