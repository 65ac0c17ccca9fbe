package io.hetgpu.testcluster.scheduler;

import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import io.hetgpu.kubescheduler.filter.NodeFit;
import io.hetgpu.kubescheduler.score.DefaultScore;
import io.hetgpu.kubescheduler.selection.HostSelection;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * One pod's trip through kube-scheduler's scheduleOne, extenders included: its own filters, then each
 * interested extender's filter over the nodes still feasible (failure fails the attempt unless the
 * extender is ignorable), then — only when more than one node is left — its own scores plus each
 * extender's 0..10 score times weight times 10 (prioritize errors are dropped, as kube-scheduler
 * does), and the highest total wins, ties broken at random. Its own scores are the default ones and, for a pod with
 * claims, the DynamicResources plugin's for prioritized lists ({@link PrioritizedListScore}, as 1.35 and later score).
 */
public final class SchedulingCycle {

    private final List<? extends SchedulerExtender> extenders;
    private final TieBreak ties;
    /** kube-scheduler's DynamicResources plugin; made at its first DRA pod (its CEL environment takes a while to build). */
    private DraFilter draFilter;

    public SchedulingCycle(List<? extends SchedulerExtender> extenders, Random ties) {
        this(extenders, TieBreak.random(ties));
    }

    public SchedulingCycle(List<? extends SchedulerExtender> extenders, TieBreak ties) {
        this.extenders = List.copyOf(extenders);
        this.ties = ties;
    }

    public Decision schedule(Pod pod, List<Node> nodes, Map<String, List<Pod>> podsByNode) {
        return attempt(pod, nodes, podsByNode).decision();
    }

    /** The same, with every node refused on the way and why. */
    public Attempt attempt(Pod pod, List<Node> nodes, Map<String, List<Pod>> podsByNode) {
        return attempt(pod, nodes, podsByNode, DraSnapshot.EMPTY);
    }

    /**
     * The same in a cluster with DRA objects: after its own filters, the DynamicResources plugin's (a node is feasible
     * only where the pod's claims can be allocated), before the extenders', as kube-scheduler runs its plugins first.
     */
    public Attempt attempt(Pod pod, List<Node> nodes, Map<String, List<Pod>> podsByNode, DraSnapshot dra) {
        var key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        var asScheduled = ApiObjects.pod(pod);
        var reasons = new LinkedHashMap<String, String>();
        var unresolvable = new java.util.HashSet<String>();
        var feasible = new ArrayList<Node>();
        // Each node and its pods as the model reads them, once for the filter and again for the scores.
        var asModelled = new java.util.HashMap<String, SchedulingNode>();
        var requestsOn = new java.util.HashMap<String, List<ResourceRequest>>();
        for (var node : nodes) {
            var name = node.getMetadata().getName();
            asModelled.put(name, ApiObjects.node(node));
            requestsOn.put(name, ApiObjects.requests(podsByNode.getOrDefault(name, List.of())));
            var fitting = dra.classes().isEmpty() ? asScheduled : new io.hetgpu.kubescheduler.SchedulingPod(asScheduled.nodeName(),
                    asScheduled.nodeSelector(), asScheduled.tolerations(), DraFilter.fitRequest(asScheduled.request(), asModelled.get(name), dra));
            NodeFit.judge(fitting, asModelled.get(name), requestsOn.get(name))
                    .ifPresentOrElse(refusal -> {
                        reasons.put(name, refusal.reason());
                        if (refusal.unresolvable()) {
                            unresolvable.add(name);
                        }
                    }, () -> feasible.add(node));
        }
        // The DynamicResources plugin's raw Score per node it kept (prioritized lists), scaled among the nodes left to score.
        var draScores = new java.util.HashMap<String, Long>();
        if (!feasible.isEmpty() && dra.inUse() && DraFilter.usesDra(pod, dra)) {
            feasible.removeIf(node -> {
                var name = node.getMetadata().getName();
                var verdict = draFilter().judge(pod, asModelled.get(name), dra);
                if (verdict instanceof DraFilter.Refused refused) {
                    reasons.put(name, refused.reason());
                    if (refused.unresolvable()) {
                        unresolvable.add(name);
                    }
                    return true;
                }
                if (verdict instanceof DraFilter.Fits fits) {
                    draScores.put(name, fits.prioritizedListScore());
                }
                return false;
            });
        }
        for (var extender : extenders) {
            if (feasible.isEmpty() || !extender.settings().filters() || !extender.isInterested(pod)) {
                continue;
            }
            FilterOutcome outcome;
            try {
                outcome = extender.filter(pod, feasible);
            } catch (ExtenderCallException e) {
                if (extender.settings().ignorable()) {
                    continue;
                }
                return new Attempt(pod, new Decision.Failed(key, "extender " + extender.settings().urlPrefix() + ": " + e.getMessage()),
                        reasons, unresolvable);
            }
            reasons.putAll(outcome.failed());
            reasons.putAll(outcome.failedAndUnresolvable());
            unresolvable.addAll(outcome.failedAndUnresolvable().keySet());
            var kept = new java.util.HashSet<>(outcome.feasible());
            feasible.removeIf(node -> !kept.contains(node.getMetadata().getName()));
        }
        if (feasible.isEmpty()) {
            return new Attempt(pod, new Decision.Unschedulable(key, unavailableMessage(nodes.size(), reasons), reasons, unresolvable),
                    reasons, unresolvable);
        }
        if (feasible.size() == 1) {
            // kube-scheduler skips scoring (its plugins' and the extenders') when one node is left.
            var only = feasible.get(0).getMetadata().getName();
            return new Attempt(pod, new Decision.Bound(key, only, Map.of(only, 0L), Map.of(only, 0L)), reasons, unresolvable);
        }
        var pluginScores = new LinkedHashMap<String, Long>();
        for (var node : feasible) {
            var name = node.getMetadata().getName();
            pluginScores.put(name, DefaultScore.score(asScheduled.request(), asModelled.get(name), requestsOn.get(name)));
        }
        if (!draScores.isEmpty()) {
            var rawDra = new LinkedHashMap<String, Long>();
            pluginScores.keySet().forEach(name -> rawDra.put(name, draScores.getOrDefault(name, 0L)));
            PrioritizedListScore.normalized(rawDra).forEach((name, score) -> pluginScores.merge(name, score, Long::sum));
        }
        var totals = new LinkedHashMap<>(pluginScores);
        for (var extender : extenders) {
            if (!extender.settings().prioritizes() || !extender.isInterested(pod)) {
                continue;
            }
            try {
                var scores = extender.prioritize(pod, feasible);
                long factor = extender.settings().weight() * ExtenderSettings.SCORE_SCALE;
                scores.forEach((name, score) -> totals.computeIfPresent(name, (n, total) -> total + score * factor));
            } catch (ExtenderCallException ignored) {
                // kube-scheduler logs and drops a failed prioritize call; the plugin scores still stand.
            }
        }
        return new Attempt(pod, new Decision.Bound(key, pickHighest(totals), totals, pluginScores), reasons, unresolvable);
    }

    /** What the DynamicResources plugin says of the pod on one node: the allocation to write once the node is chosen. */
    public DraFilter.Verdict draVerdict(Pod pod, Node node, DraSnapshot dra) {
        return draFilter().judge(pod, ApiObjects.node(node), dra);
    }

    /** The DynamicResources plugin, for preemption's dry run to check a DRA pod with its victims' devices released. */
    DraFilter draFilterForPreemption() {
        return draFilter();
    }

    private synchronized DraFilter draFilter() {
        if (draFilter == null) {
            draFilter = new DraFilter(io.hetgpu.kubescheduler.dra.DraLimits.DEFAULTS);
        }
        return draFilter;
    }

    /** Highest total; among equals each has the same chance, like kube-scheduler's selectHost. */
    private String pickHighest(Map<String, Long> totals) {
        var selection = new HostSelection<String>(ties);
        totals.forEach(selection::offer);
        return selection.chosen();
    }

    /** kube-scheduler's FailedScheduling text: reasons counted and sorted. */
    static String unavailableMessage(int nodeCount, Map<String, String> reasons) {
        var counted = new TreeMap<String, Long>(reasons.values().stream()
                .collect(Collectors.groupingBy(reason -> reason, Collectors.counting())));
        var parts = counted.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
        return "0/" + nodeCount + " nodes are available" + (parts.isEmpty() ? "." : ": " + parts + ".");
    }
}
