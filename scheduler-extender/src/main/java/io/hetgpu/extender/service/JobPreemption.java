package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * What a job of several pods may evict, as a whole. kube-scheduler preempts for one pod at a time and knows no jobs; the
 * preempt verb, asked for a member, answers for its job: it finds the lower-priority work whose eviction lets the whole
 * job start, and keeps only the candidate nodes where that eviction is needed, with those victims. Work is counted by
 * victim job, not by pod: a ps/worker job that loses one pod restarts whole, so evicting one pod of it costs everything
 * its pods did since they last saved, and one small job evicted whole costs less than pieces of several.
 *
 * <p>Victim jobs are taken cheapest first (least work lost, then fewest GPUs) until the job can be planned whole over the
 * GPUs they free; if it cannot be even with every lower-priority pod gone, nothing is evicted for it. kube-scheduler
 * evicts on one node per attempt: the job's later attempts (this member's again, or another member's) evict the rest of
 * the chosen work, each only where the plan needs it, and the job is placed whole once it fits.
 */
final class JobPreemption {

    /** Victims by node where the job needs evictions, or why it needs none or cannot be helped. */
    sealed interface Answer permits Evict, Nothing {
    }

    /** Evict these pods (by UID) on these nodes: the job then fits whole. */
    record Evict(Map<String, List<String>> victimsByNode, long gpuSecondsLost) implements Answer {
    }

    /** Evict nothing, because: the job fits already, or would not fit even with every lower-priority pod gone. */
    record Nothing(String why) implements Answer {
    }

    /** A victim job (or a pod of no job): its pods, and the work all of them lose if any is evicted. */
    private record Unit(String key, Set<String> uids, int gpus, long gpuSecondsLost) {
    }

    private final ClusterView cluster;
    private final NodeStateFactory nodes;

    JobPreemption(ClusterView cluster, NodeStateFactory nodes) {
        this.cluster = cluster;
        this.nodes = nodes;
    }

    /**
     * @param plan     plans the job's waiting members over node states (the verbs' own planner, with the holds of other
     *                 jobs taken)
     * @param priority the preemptor's priority: only pods below it may be evicted
     */
    Answer answer(Function<List<NodeState>, JobPlanner.Outcome> plan, int priority, Instant now) {
        var snapshot = cluster.nodes();
        var current = new ArrayList<NodeState>(snapshot.size());
        for (int i = 0; i < snapshot.size(); i++) {
            current.add(nodes.state(snapshot.facts(i), snapshot.boundPods(i)));
        }
        if (plan.apply(current) instanceof JobPlanner.Planned) {
            return new Nothing("the job fits whole without evicting anything");
        }
        var units = units(priority, now);
        // The cheapest victim job that alone lets the job start, against the cheapest run of victim jobs that together
        // do: one small job evicted whole may cost less than the pieces of several that come before it.
        Choice best = null;
        for (int i = 0; i < Math.min(units.size(), SINGLE_UNITS_TRIED); i++) {
            var alone = choice(List.of(units.get(i)), snapshot, plan);
            if (alone != null) {
                best = alone;
                break;
            }
        }
        var together = new ArrayList<Unit>();
        for (var unit : units) {
            together.add(unit);
            if (best != null && lost(together) >= best.gpuSecondsLost()) {
                break;
            }
            var run = choice(together, snapshot, plan);
            if (run != null) {
                best = best == null || run.gpuSecondsLost() < best.gpuSecondsLost() ? run : best;
                break;
            }
        }
        if (best == null) {
            return new Nothing("the job would not fit whole even with every pod of lower priority evicted");
        }
        return new Evict(victimsWhereNeeded(best.planned(), current, snapshot, best.freed()), best.gpuSecondsLost());
    }

    /** How many victim jobs are tried alone, cheapest first, before runs of them: each try plans the whole job once. */
    private static final int SINGLE_UNITS_TRIED = 32;

    private record Choice(Set<String> freed, JobPlanner.Planned planned, long gpuSecondsLost) {
    }

    /** The plan with these victim jobs evicted, or null when the job still does not fit whole. */
    private Choice choice(List<Unit> units, io.hetgpu.extender.cluster.NodeSnapshot snapshot, Function<List<NodeState>, JobPlanner.Outcome> plan) {
        var freed = new HashSet<String>();
        units.forEach(unit -> freed.addAll(unit.uids()));
        return plan.apply(freedStates(snapshot, freed)) instanceof JobPlanner.Planned planned ? new Choice(freed, planned, lost(units)) : null;
    }

    private static long lost(List<Unit> units) {
        return units.stream().mapToLong(Unit::gpuSecondsLost).sum();
    }

    /** For each node where a seat takes GPUs not free now: the freed pods there, to be evicted. */
    private Map<String, List<String>> victimsWhereNeeded(JobPlanner.Planned planned, List<NodeState> current,
                                                         io.hetgpu.extender.cluster.NodeSnapshot snapshot, Set<String> freed) {
        var byNode = new LinkedHashMap<String, List<String>>();
        for (var seat : planned.seats()) {
            var now = current.stream().filter(state -> state.name().equals(seat.nodeName())).findFirst().orElseThrow();
            if ((seat.mask() & ~now.freeMask()) == 0 || byNode.containsKey(seat.nodeName())) {
                continue;
            }
            var victims = snapshot.boundPods(seat.nodeName()).stream().filter(pod -> freed.contains(pod.uid()) && !pod.released())
                    .map(BoundPod::uid).toList();
            if (!victims.isEmpty()) {
                byNode.put(seat.nodeName(), victims);
            }
        }
        return byNode;
    }

    private List<NodeState> freedStates(io.hetgpu.extender.cluster.NodeSnapshot snapshot, Set<String> freed) {
        var states = new ArrayList<NodeState>(snapshot.size());
        for (int i = 0; i < snapshot.size(); i++) {
            var bound = snapshot.boundPods(i);
            var state = nodes.state(snapshot.facts(i), bound);
            states.add(state.withFreed(DeviceHoldings.heldBy(state.gpus(), bound, pod -> freed.contains(pod.uid()))));
        }
        return states;
    }

    /** Every pod below {@code priority} holding GPUs, grouped by its job, cheapest first. */
    private List<Unit> units(int priority, Instant now) {
        var byKey = new LinkedHashMap<String, List<BoundPod>>();
        var snapshot = cluster.nodes();
        for (int i = 0; i < snapshot.size(); i++) {
            for (var bound : snapshot.boundPods(i)) {
                if (bound.priority() >= priority || bound.binding() || bound.released() || bound.gpuCount() == 0) {
                    continue;
                }
                var pod = cluster.podByUid(bound.uid());
                var key = pod == null ? "" : JobMembershipReader.keyOf(pod).orElse("");
                byKey.computeIfAbsent(key.isEmpty() ? "pod " + bound.uid() : key, k -> new ArrayList<>()).add(bound);
            }
        }
        var units = new ArrayList<Unit>();
        byKey.forEach((key, pods) -> {
            var uids = new HashSet<String>();
            int gpus = 0;
            for (var pod : pods) {
                uids.add(pod.uid());
                gpus += pod.gpuCount();
            }
            units.add(new Unit(key, uids, gpus, lostBy(key, pods, now)));
        });
        units.sort(Comparator.comparingLong(Unit::gpuSecondsLost).thenComparingInt(Unit::gpus).thenComparing(Unit::key));
        return units;
    }

    /** The work a victim job loses: every one of its pods since it last saved (its pods of any node restart with it). */
    private long lostBy(String key, List<BoundPod> pods, Instant now) {
        long lost = 0;
        for (var bound : pods) {
            var pod = cluster.podByUid(bound.uid());
            lost += lostBy(pod, bound.gpuCount(), now);
        }
        return lost;
    }

    static long lostBy(Pod pod, int gpus, Instant now) {
        if (pod == null) {
            return 0;
        }
        var annotations = pod.getMetadata().getAnnotations() == null ? Map.<String, String>of() : pod.getMetadata().getAnnotations();
        var started = pod.getStatus() == null ? null : pod.getStatus().getStartTime();
        return PreemptionChoice.gpuSecondsLost(gpus, PreemptionChoice.lastSaved(annotations, started, now), now);
    }
}
