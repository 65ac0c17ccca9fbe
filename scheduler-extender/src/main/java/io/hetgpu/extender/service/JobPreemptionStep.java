package io.hetgpu.extender.service;

import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.NodeState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The pure rule of what a job of several pods may evict, as a whole: the preempt verb takes it over its cluster view
 * ({@link JobPreemption}), the simulator over its own cluster. Work is counted by victim job, not by pod: a ps/worker
 * job that loses one pod restarts whole, so evicting one pod of it costs everything its pods did since they last saved,
 * and one small job evicted whole costs less than pieces of several.
 *
 * <p>The choices weighed, each a set of victim jobs evicted whole: each victim job alone (the 32 cheapest), the run of
 * them taken cheapest first (least work lost, then fewest GPUs) until the job can be planned whole, and for each node
 * the run of the victim jobs on it, cheapest first, until the job can be planned. Among those that let the job be
 * planned, the best plan wins, as the pod rule ({@link PreemptionStep}) ranks a pod's candidates: the newest slowest
 * card for a job that wants the newest cards, then the fewest nodes, then the fewest racks; then the least work lost.
 * Cheapest alone, the rule would start an urgent 8-GPU job on two servers in two racks (0.6 of its speed in the
 * simulator) to spare a few minutes of someone's work. If the job cannot be planned even with every lower-priority
 * pod gone, nothing is evicted for it; where it is planned, evictions are named only on the nodes whose seats need
 * GPUs that are not free now.
 */
public final class JobPreemptionStep {

    /**
     * A pod below the preemptor's priority that holds GPUs.
     *
     * @param job            its job's key, or "" for a pod of no job of several (it is then a victim job of its own)
     * @param mask           the devices it holds on its node
     * @param gpuSecondsLost the work it loses if evicted, since it last saved
     */
    public record Victim(String uid, String node, String job, int gpus, long mask, long gpuSecondsLost) {
        public Victim {
            Objects.requireNonNull(uid, "uid");
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(job, "job");
        }
    }

    /** Victims by node where the job needs evictions, or why it needs none or cannot be helped. */
    public sealed interface Answer permits Evict, Nothing {
    }

    /** Evict these pods (by UID) on these nodes, in the order the victims were given: the job then fits whole. */
    public record Evict(Map<String, List<String>> victimsByNode, long gpuSecondsLost) implements Answer {
        public Evict {
            var copy = new LinkedHashMap<String, List<String>>();
            victimsByNode.forEach((node, uids) -> copy.put(node, List.copyOf(uids)));
            victimsByNode = java.util.Collections.unmodifiableMap(copy);
        }
    }

    /** Evict nothing, because: the job fits already, or would not fit even with every lower-priority pod gone. */
    public record Nothing(String why) implements Answer {
    }

    static final String FITS = "the job fits whole without evicting anything";
    static final String NEVER_FITS = "the job would not fit whole even with every pod of lower priority evicted";

    /** How many victim jobs are tried alone, cheapest first, before runs of them: each try plans the whole job once. */
    private static final int SINGLE_UNITS_TRIED = 32;

    /** A victim job (or a pod of no job): its pods, and the work all of them lose if any is evicted. */
    private record Unit(String key, Set<String> uids, int gpus, long gpuSecondsLost) {
    }

    private record Choice(Set<String> freed, JobPlanner.Planned planned, long gpuSecondsLost) {
    }

    private JobPreemptionStep() {
    }

    /**
     * @param plan        plans the job's waiting members over node states (with the GPUs other jobs' plans hold taken)
     * @param current     every node as it is now
     * @param victims     every pod below the preemptor's priority that holds GPUs, in a stable order (the order of the
     *                    victims named on a node)
     * @param newestCards whether the job wants the newest cards (its priority's preference): a plan on newer cards then
     *                    wins over one on fewer nodes
     */
    public static Answer answer(Function<List<NodeState>, JobPlanner.Outcome> plan, List<NodeState> current, List<Victim> victims,
                                boolean newestCards) {
        if (plan.apply(current) instanceof JobPlanner.Planned) {
            return new Nothing(FITS);
        }
        var units = units(victims);
        var byUid = new HashMap<String, Victim>();
        victims.forEach(victim -> byUid.put(victim.uid(), victim));
        var choices = new ArrayList<Choice>();
        for (int i = 0; i < Math.min(units.size(), SINGLE_UNITS_TRIED); i++) {
            var alone = choice(List.of(units.get(i)), current, byUid, plan);
            if (alone != null) {
                choices.add(alone);
            }
        }
        var cheapestRun = cheapestRun(units, current, byUid, plan);
        if (cheapestRun != null) {
            choices.add(cheapestRun);
        }
        for (var state : current) {
            var onNode = units.stream().filter(unit -> unit.uids().stream().anyMatch(uid -> byUid.get(uid).node().equals(state.name())))
                    .toList();
            var cleared = cheapestRun(onNode, current, byUid, plan);
            if (cleared != null) {
                choices.add(cleared);
            }
        }
        var best = choices.stream().min(Comparator.comparing((Choice choice) -> Quality.of(choice.planned(), newestCards))
                .thenComparingLong(Choice::gpuSecondsLost));
        return best.<Answer>map(choice -> new Evict(victimsWhereNeeded(choice, current, victims), choice.gpuSecondsLost()))
                .orElseGet(() -> new Nothing(NEVER_FITS));
    }

    /** The first run of these victim jobs, in their order, that lets the job be planned; null if none does. */
    private static Choice cheapestRun(List<Unit> units, List<NodeState> current, Map<String, Victim> byUid,
                                      Function<List<NodeState>, JobPlanner.Outcome> plan) {
        var run = new ArrayList<Unit>();
        for (var unit : units) {
            run.add(unit);
            var planned = choice(run, current, byUid, plan);
            if (planned != null) {
                return planned;
            }
        }
        return null;
    }

    /** How good a plan is: its slowest card's tier (when the job wants the newest), then how few nodes and racks it spans. */
    private record Quality(int tier, int nodes, int racks) implements Comparable<Quality> {

        static Quality of(JobPlanner.Planned planned, boolean newestCards) {
            int slowest = Integer.MAX_VALUE;
            var nodes = new HashSet<String>();
            var racks = new HashSet<String>();
            for (var seat : planned.seats()) {
                if (seat.set().positions().isEmpty()) {
                    continue;
                }
                nodes.add(seat.nodeName());
                racks.add(seat.node().rack());
                for (int position : seat.set().positions()) {
                    slowest = Math.min(slowest, seat.node().gpus().tiers().get(position).rank());
                }
            }
            return new Quality(newestCards && slowest != Integer.MAX_VALUE ? slowest : 0, nodes.size(), racks.size());
        }

        /** Better first. */
        @Override
        public int compareTo(Quality other) {
            return Comparator.comparingInt((Quality quality) -> -quality.tier()).thenComparingInt(Quality::nodes)
                    .thenComparingInt(Quality::racks).compare(this, other);
        }
    }

    /** The plan with these victim jobs evicted, or null when the job still does not fit whole. */
    private static Choice choice(List<Unit> units, List<NodeState> current, Map<String, Victim> byUid,
                                 Function<List<NodeState>, JobPlanner.Outcome> plan) {
        var freed = new HashSet<String>();
        units.forEach(unit -> freed.addAll(unit.uids()));
        var freedByNode = new HashMap<String, Long>();
        for (var uid : freed) {
            var victim = byUid.get(uid);
            freedByNode.merge(victim.node(), victim.mask(), (a, b) -> a | b);
        }
        var states = new ArrayList<NodeState>(current.size());
        for (var state : current) {
            var mask = freedByNode.get(state.name());
            states.add(mask == null ? state : state.withFreed(mask));
        }
        return plan.apply(states) instanceof JobPlanner.Planned planned ? new Choice(freed, planned, lost(units)) : null;
    }

    private static long lost(List<Unit> units) {
        return units.stream().mapToLong(Unit::gpuSecondsLost).sum();
    }

    /** For each node where a seat takes GPUs not free now: the chosen victims there, to be evicted. */
    private static Map<String, List<String>> victimsWhereNeeded(Choice best, List<NodeState> current, List<Victim> victims) {
        var freeNow = new HashMap<String, Long>();
        current.forEach(state -> freeNow.put(state.name(), state.freeMask()));
        var byNode = new LinkedHashMap<String, List<String>>();
        for (var seat : best.planned().seats()) {
            if ((seat.mask() & ~freeNow.get(seat.nodeName())) == 0 || byNode.containsKey(seat.nodeName())) {
                continue;
            }
            var there = victims.stream().filter(victim -> victim.node().equals(seat.nodeName()) && best.freed().contains(victim.uid()))
                    .map(Victim::uid).toList();
            if (!there.isEmpty()) {
                byNode.put(seat.nodeName(), there);
            }
        }
        return byNode;
    }

    /** The victims grouped by their job, cheapest first. */
    private static List<Unit> units(List<Victim> victims) {
        var byKey = new LinkedHashMap<String, List<Victim>>();
        for (var victim : victims) {
            byKey.computeIfAbsent(victim.job().isEmpty() ? "pod " + victim.uid() : victim.job(), k -> new ArrayList<>()).add(victim);
        }
        var units = new ArrayList<Unit>();
        byKey.forEach((key, pods) -> {
            var uids = new HashSet<String>();
            int gpus = 0;
            long lost = 0;
            for (var pod : pods) {
                uids.add(pod.uid());
                gpus += pod.gpus();
                lost += pod.gpuSecondsLost();
            }
            units.add(new Unit(key, uids, gpus, lost));
        });
        units.sort(Comparator.comparingLong(Unit::gpuSecondsLost).thenComparingInt(Unit::gpus).thenComparing(Unit::key));
        return units;
    }
}
