package io.hetgpu.extender.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The plans this extender holds GPUs for: one per job, each with a deadline. While a plan lives, its members' devices
 * count as taken for every other pod (the filter, the prioritize and the bind verb subtract them); the member itself
 * is steered to its seat. A member's hold ends once the cluster view shows the member bound (its record then counts),
 * the whole plan ends when no hold is left, when it is released (a member gone, a seat no longer free) or at its
 * deadline, after which the job's next pod plans again. Held in memory only: a restarted extender starts with none, and
 * seats the waiting pods of the jobs it finds half-bound before it answers any filter ({@code WholeJobs}).
 */
public final class JobHolds {

    /** A member's seat as held: the pod (by UID and name), the node and the devices (positions as a mask, and IDs). */
    public record Hold(String podUid, String podName, String node, long mask, List<String> devices) {
        public Hold {
            Objects.requireNonNull(podUid, "podUid");
            Objects.requireNonNull(podName, "podName");
            Objects.requireNonNull(node, "node");
            devices = List.copyOf(devices);
        }
    }

    /** A job's plan as held, until {@code deadline}. */
    public record HeldPlan(String jobKey, List<Hold> holds, Instant plannedAt, Instant deadline) {
        public HeldPlan {
            Objects.requireNonNull(jobKey, "jobKey");
            holds = List.copyOf(holds);
        }

        /** The hold of the pod of this UID, or null. */
        public Hold holdOf(String podUid) {
            for (var hold : holds) {
                if (hold.podUid().equals(podUid)) {
                    return hold;
                }
            }
            return null;
        }

        public int gpus() {
            return holds.stream().mapToInt(hold -> Long.bitCount(hold.mask())).sum();
        }
    }

    /** What ended a plan, for the log and the metrics. */
    public enum Ending {
        /** Every member is bound. */
        COMPLETE,
        /** Its deadline passed with members unbound. */
        EXPIRED,
        /** A member went away or a seat stopped being free: the job plans again. */
        RELEASED
    }

    /** Told of each plan that ends, and why (and, if it wants, of each plan made). */
    @FunctionalInterface
    public interface Listener {
        Listener NONE = (plan, ending, why) -> { };

        void ended(HeldPlan plan, Ending ending, String why);

        default void held(HeldPlan plan) {
        }
    }

    private final Clock clock;
    private final Duration deadline;
    private final Listener listener;
    private final Map<String, HeldPlan> byJob = new HashMap<>();
    /** Every live hold by node, rebuilt on each change: the verbs' per-node reads take no lock. */
    private volatile Map<String, List<Held>> byNode = Map.of();

    private record Held(Hold hold, Instant deadline) {
    }

    public JobHolds(Clock clock, Duration deadline, Listener listener) {
        if (deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("deadline must be above 0, got " + deadline);
        }
        this.clock = clock;
        this.deadline = deadline;
        this.listener = listener;
    }

    /** How long a plan holds its GPUs. */
    public Duration deadline() {
        return deadline;
    }

    /** Holds the seats of a job's plan from now until the deadline, replacing any plan the job had. */
    public synchronized HeldPlan hold(String jobKey, List<Hold> holds) {
        var now = clock.instant();
        var plan = new HeldPlan(jobKey, holds, now, now.plus(deadline));
        byJob.put(jobKey, plan);
        publish();
        listener.held(plan);
        return plan;
    }

    /** The job's live plan, or null (a plan past its deadline ends here, as it would at the next sweep). */
    public synchronized HeldPlan planOf(String jobKey) {
        var plan = byJob.get(jobKey);
        if (plan != null && !clock.instant().isBefore(plan.deadline())) {
            end(plan, Ending.EXPIRED, "deadline passed with " + plan.holds().size() + " of its pods unbound");
            return null;
        }
        return plan;
    }

    /**
     * Moves members' seats within their job's live plan (kube-scheduler offers a member other nodes than the plan chose:
     * its own filters, a node selector, refuse the seat; the members whose seats it then takes move too): the job keeps
     * its other seats and its deadline. Returns the plan as now held, or null when the job has no live plan or a pod no
     * seat in it.
     */
    public synchronized HeldPlan move(String jobKey, List<Hold> moved) {
        var plan = planOf(jobKey);
        if (plan == null || moved.stream().anyMatch(hold -> plan.holdOf(hold.podUid()) == null)) {
            return null;
        }
        var byUid = new HashMap<String, Hold>();
        moved.forEach(hold -> byUid.put(hold.podUid(), hold));
        var holds = new ArrayList<Hold>(plan.holds().size());
        for (var hold : plan.holds()) {
            holds.add(byUid.getOrDefault(hold.podUid(), hold));
        }
        var now = new HeldPlan(jobKey, holds, plan.plannedAt(), plan.deadline());
        byJob.put(jobKey, now);
        publish();
        return now;
    }

    /** Ends the job's plan, if it has one: its GPUs are free again for everyone. */
    public synchronized void release(String jobKey, String why) {
        var plan = byJob.get(jobKey);
        if (plan != null) {
            end(plan, Ending.RELEASED, why);
        }
    }

    /** Ends the plan that holds a seat for the pod of this UID, if one does. */
    public synchronized void releaseHolding(String podUid, String why) {
        for (var plan : List.copyOf(byJob.values())) {
            if (plan.holdOf(podUid) != null) {
                end(plan, Ending.RELEASED, why);
            }
        }
    }

    /**
     * Ends the holds of members the cluster now shows bound ({@code bound}, by UID), each plan with none left, and each
     * plan past its deadline.
     */
    public synchronized void sweep(Predicate<String> bound) {
        if (byJob.isEmpty()) {
            return;
        }
        var now = clock.instant();
        boolean changed = false;
        for (var plan : List.copyOf(byJob.values())) {
            if (!now.isBefore(plan.deadline())) {
                var unbound = plan.holds().stream().filter(hold -> !bound.test(hold.podUid())).count();
                end(plan, unbound == 0 ? Ending.COMPLETE : Ending.EXPIRED, "deadline passed with " + unbound + " of its pods unbound");
                continue;
            }
            var left = plan.holds().stream().filter(hold -> !bound.test(hold.podUid())).toList();
            if (left.isEmpty()) {
                end(plan, Ending.COMPLETE, "every pod bound");
            } else if (left.size() < plan.holds().size()) {
                byJob.put(plan.jobKey(), new HeldPlan(plan.jobKey(), left, plan.plannedAt(), plan.deadline()));
                changed = true;
            }
        }
        if (changed) {
            publish();
        }
    }

    /** The devices held on the node for any pod but {@code exceptUid} ("" for none) by plans before their deadline. */
    public long heldOn(String node, String exceptUid) {
        var held = byNode.get(node);
        if (held == null) {
            return 0;
        }
        var now = clock.instant();
        long mask = 0;
        for (var one : held) {
            if (!one.hold().podUid().equals(exceptUid) && now.isBefore(one.deadline())) {
                mask |= one.hold().mask();
            }
        }
        return mask;
    }

    /** The nodes any plan holds devices on (some of those plans may be past their deadline): see {@link #heldOn}. */
    public Set<String> nodesHeld() {
        return byNode.keySet();
    }

    /** Whether any plan holds anything: the verbs skip the per-node subtraction when none does. */
    public boolean any() {
        return !byNode.isEmpty();
    }

    /** The hold of the pod of this UID in a live plan, or null. */
    public synchronized Hold holdOf(String podUid) {
        var now = clock.instant();
        for (var plan : byJob.values()) {
            var hold = plan.holdOf(podUid);
            if (hold != null && now.isBefore(plan.deadline())) {
                return hold;
            }
        }
        return null;
    }

    /** How many GPUs live plans hold now. */
    public int gpusHeld() {
        return gpusHeld(uid -> true);
    }

    /**
     * How many GPUs live plans hold now for the pods {@code waiting} accepts (by UID): a plan past its deadline, or a
     * member bound since the last sweep, holds nothing any more even before a sweep ends its hold.
     */
    public int gpusHeld(Predicate<String> waiting) {
        var now = clock.instant();
        int gpus = 0;
        for (var held : byNode.values()) {
            for (var one : held) {
                if (now.isBefore(one.deadline()) && waiting.test(one.hold().podUid())) {
                    gpus += Long.bitCount(one.hold().mask());
                }
            }
        }
        return gpus;
    }

    /** The plans held now. */
    public synchronized List<HeldPlan> plans() {
        return List.copyOf(byJob.values());
    }

    private void end(HeldPlan plan, Ending ending, String why) {
        byJob.remove(plan.jobKey());
        publish();
        listener.ended(plan, ending, why);
    }

    private void publish() {
        var nodes = new HashMap<String, List<Held>>();
        for (var plan : byJob.values()) {
            for (var hold : plan.holds()) {
                nodes.computeIfAbsent(hold.node(), node -> new ArrayList<>()).add(new Held(hold, plan.deadline()));
            }
        }
        nodes.replaceAll((node, held) -> List.copyOf(held));
        byNode = Map.copyOf(nodes);
    }
}
