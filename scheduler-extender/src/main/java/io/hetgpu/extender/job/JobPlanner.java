package io.hetgpu.extender.job;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.WaitingPeer;
import io.hetgpu.extender.policy.Candidate;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.GpuSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Places every pod of a job that no node holds yet, at once, on a copy of the nodes: each member in turn is judged and
 * scored by the one placement policy (card tier by priority, NVLink sets, the job's closeness with the members planned
 * so far as its peers and those after it as waiting, the data, CPU pods off GPU nodes, packing), goes to its
 * best-scored node, and takes its GPUs from the copy before the next member is judged. Either every member gets a seat
 * or the job gets the reason it lacks one; nothing is held by planning. Pure: the extender holds what a plan gives, the
 * simulator commits it.
 *
 * <p>Members are planned largest first (most GPUs, then by name): a big pod has the fewest places to go, and pods
 * without GPUs (parameter servers) then follow the workers they serve. The names settle which of two alike pods gets
 * which seat, so that a plan does not depend on the order an informer happens to list a job's pods in. A greedy plan can miss an arrangement that
 * a search would find; it never gives a GPU twice, and what it places, it places as the policy would place each pod.
 */
public final class JobPlanner {

    /**
     * kube-scheduler's own verdict on a member and a node (its resources, selectors, taints) given the members planned
     * before it, which the extender's policy does not judge. The simulator asks its cpu and memory model; the extender
     * without such a model answers yes, and kube-scheduler refuses a node its own filters reject when the member comes.
     */
    @FunctionalInterface
    public interface MemberFit {
        MemberFit ANY = new MemberFit() {
            @Override
            public boolean fits(PodRequest member, String node, List<Seat> planned) {
                return true;
            }

            @Override
            public boolean judges(PodRequest member) {
                return false;
            }
        };

        boolean fits(PodRequest member, String node, List<Seat> planned);

        /**
         * Whether {@link #fits} may refuse any node to this member: where not, the planner does not ask for each node
         * (not even its name, a memory load per node for each member).
         */
        default boolean judges(PodRequest member) {
            return true;
        }
    }

    /**
     * Where a caller keeps the assessments of every node for a member's shape from one plan to the next: a 5,000-node
     * plan judges every node for its first member, and the next plan, a second later, finds most nodes unchanged.
     */
    public interface KeptAssessments {
        KeptAssessments NONE = new KeptAssessments() {
            @Override
            public PlacementPolicy.Assessment[] known(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes) {
                return new PlacementPolicy.Assessment[nodes.size()];
            }

            @Override
            public void made(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes, PlacementPolicy.Assessment[] assessments) {
            }
        };

        /** The assessments still true of {@code nodes} (by position; null where a node must be judged), a new array. */
        PlacementPolicy.Assessment[] known(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes);

        /** Every node of {@code nodes} judged, before any member took a seat; the array stays the planner's, which changes it. */
        void made(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes, PlacementPolicy.Assessment[] assessments);
    }

    /**
     * How long a plan may take: asked between members, so that a plan stops within one member's scoring of its limit.
     * kube-scheduler waits for the filter that plans, and a job of thousands of pods over thousands of nodes must not
     * outlast its call.
     */
    public interface Budget {
        Budget UNLIMITED = new Budget() {
            @Override
            public boolean spent() {
                return false;
            }

            @Override
            public java.time.Duration limit() {
                return java.time.Duration.ofSeconds(Long.MAX_VALUE);
            }
        };

        boolean spent();

        java.time.Duration limit();

        /** A budget of {@code limit} from now, on the JVM's monotonic clock. */
        static Budget from(java.time.Duration limit) {
            long until = System.nanoTime() + limit.toNanos();
            return new Budget() {
                @Override
                public boolean spent() {
                    return System.nanoTime() - until > 0;
                }

                @Override
                public java.time.Duration limit() {
                    return limit;
                }
            };
        }
    }

    /** What is known of the job beyond its members: for each member its context (bound peers, data) and closed tiers. */
    public record Job(String key, List<PodRequest> members, Function<PodRequest, PlacementContext> context,
                      Function<PodRequest, ClosedTier> closed) {
        public Job {
            Objects.requireNonNull(key, "key");
            members = List.copyOf(members);
            Objects.requireNonNull(context, "context");
            Objects.requireNonNull(closed, "closed");
        }
    }

    /**
     * A member's planned place: the node and the GPU set the policy's allocator chose there, and the summary of the
     * member's scores when it was planned ({@link ScoreTable#summary}: the best few nodes and how many did not fit, why
     * this node: what the extender explains for a pod it places). A whole table would keep a row per node for each
     * member until the plan is held.
     */
    public record Seat(PodRequest member, NodeState node, GpuSet set, ScoreTable scores) {
        public String nodeName() {
            return node.name();
        }

        public long mask() {
            return DeviceMask.of(set.positions());
        }

        /** The device IDs of the set, in the order the container will see them. */
        public List<String> devices() {
            return set.positions().stream().map(position -> node.gpus().topology().device(position).uuid()).toList();
        }
    }

    /** A plan for every member, or why there is none. */
    public sealed interface Outcome permits Planned, Lacking {
    }

    /** Every member's seat, in the order they were planned. */
    public record Planned(List<Seat> seats) implements Outcome {
        public Planned {
            seats = List.copyOf(seats);
        }

        /** The seat of the member of this name, or null. */
        public Seat seatOf(String podName) {
            for (var seat : seats) {
                if (seat.member().name().equals(podName)) {
                    return seat;
                }
            }
            return null;
        }
    }

    /**
     * No plan: what the job lacks. {@code need} says what the whole job asks against what is free, {@code detail} which
     * member found no node and why each node refused it; a pod's reason is cut at a few hundred characters, so what
     * matters most comes first.
     */
    public record Lacking(String need, String detail, String member) implements Outcome {

        /** @param member the member that found no node ("" where the plan stopped for another reason) */
        public Lacking {
            Objects.requireNonNull(member, "member");
        }

        /** One line for the pod's reason. */
        public String reason() {
            return need + "; " + detail;
        }
    }

    /** How many pod shapes a plan keeps every node's assessment for at once. */
    static final int SHAPES_JUDGED = 16;

    private final PlacementPolicy policy;

    public JobPlanner(PlacementPolicy policy) {
        this.policy = policy;
    }

    /** Whether the policy gives this member the newest cards (its priority, or its own hint). */
    public boolean wantsNewest(PodRequest member) {
        return member.needsGpus() && policy.preferenceOf(member) == io.hetgpu.extender.model.GpuPreference.NEWEST;
    }

    /**
     * Why {@code job}, none of whose members is on a node yet, waits for the room the policy's job headroom keeps, or ""
     * when it may be planned now ({@code nodes}: every node, with the GPUs of other jobs' plans taken).
     */
    public String heldBack(Job job, List<NodeState> nodes) {
        return policy.heldBackForHeadroom(job.key(), job.members(), nodes);
    }

    /** Plans every member of {@code job} over {@code nodes} (their free devices as other pods and plans leave them). */
    public Outcome plan(Job job, List<NodeState> nodes, MemberFit fit) {
        return plan(job, nodes, fit, KeptAssessments.NONE);
    }

    /** The same, with the nodes' assessments for a shape, before any seat is taken, found in and left to {@code kept}. */
    public Outcome plan(Job job, List<NodeState> nodes, MemberFit fit, KeptAssessments kept) {
        return plan(job, nodes, fit, kept, Budget.UNLIMITED);
    }

    /** The same, given up with what it lacks once {@code budget} is spent. */
    public Outcome plan(Job job, List<NodeState> nodes, MemberFit fit, KeptAssessments kept, Budget budget) {
        var order = new ArrayList<>(job.members());
        order.sort(Comparator.comparingInt(PodRequest::gpuCount).reversed().thenComparing(PodRequest::name));
        // Each member's context names those after it as waiting: one list, of which each member takes its tail.
        var waiting = order.stream().map(pod -> new WaitingPeer(pod.name(), pod.gpuCount())).toList();
        var positions = HashMap.<String, Integer>newHashMap(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            positions.putIfAbsent(nodes.get(i).name(), i);
        }
        var states = new ArrayList<>(nodes);
        // Assessments per pod shape and closed tier, kept across members: a seat changes one node, judged again alone.
        // The shapes last used only: each keeps an assessment per node, and a job's pods can each name a shape of their
        // own (a free-text workload class), which kept them all made a plan's memory grow as pods times nodes.
        var assessed = new LinkedHashMap<List<Object>, Judged>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<List<Object>, Judged> eldest) {
                return size() > SHAPES_JUDGED;
            }
        };
        var seats = new ArrayList<Seat>(order.size());
        var plannedPeers = new ArrayList<PeerLocation>(order.size());
        // An eviction floor holds the job only where preemption could free enough faster cards for all of it.
        int jobGpus = order.stream().mapToInt(PodRequest::gpuCount).sum();
        for (int m = 0; m < order.size(); m++) {
            if (budget.spent()) {
                return new Lacking(need(job, order, nodes), "planning stopped after " + m + " of its " + order.size()
                        + " pods: a plan may take " + budget.limit().toMillis() + " ms (within kube-scheduler's httpTimeout)", "");
            }
            var member = order.get(m);
            var closed = job.closed().apply(member).forJobOf(jobGpus);
            var key = List.<Object>of(member.shape(), closed);
            var judged = assessed.get(key);
            if (judged == null) {
                var assessments = kept.known(member.shape(), closed, nodes);
                for (int i = 0; i < nodes.size(); i++) {
                    if (assessments[i] == null) {
                        assessments[i] = policy.assess(member, nodes.get(i), closed);
                    }
                }
                kept.made(member.shape(), closed, nodes, assessments);
                judged = new Judged(assessments);
                // The seats taken so far changed their nodes: those are judged again below.
                for (var seat : seats) {
                    judged.changed(positions.get(seat.nodeName()));
                }
                assessed.put(key, judged);
            }
            for (int i = judged.changed.nextSetBit(0); i >= 0; i = judged.changed.nextSetBit(i + 1)) {
                judged.assessments[i] = policy.assess(member, states.get(i), closed);
            }
            var usable = judged.usable();
            judged.changed.clear();
            if (fit.judges(member)) {
                var allowed = new ArrayList<Candidate>(usable.size());
                for (var candidate : usable) {
                    if (fit.fits(member, candidate.name(), seats)) {
                        allowed.add(candidate);
                    }
                }
                usable = allowed;
            }
            if (usable.isEmpty()) {
                return new Lacking(need(job, order, nodes), detail(seats, member, states, refusals(member, states, judged.assessments, fit, seats)),
                        member.name());
            }
            var table = policy.scoreCandidates(member, usable, context(job, member, plannedPeers, waiting.subList(m + 1, order.size())));
            ScoreTable.Row best = table.best();
            var seat = new Seat(member, best.candidate().node(), best.candidate().set(), table.summary(ScoreTable.EXPLAINED_ROWS));
            seats.add(seat);
            plannedPeers.add(new PeerLocation(member.name(), seat.nodeName(), seat.node().rack(), seat.node().zone()));
            int at = positions.get(seat.nodeName());
            states.set(at, states.get(at).withTaken(seat.mask()));
            for (var each : assessed.values()) {
                each.changed(at);
            }
        }
        return new Planned(seats);
    }

    /**
     * Every node judged for one pod shape and closed tier, and the nodes a seat changed since (judged again before the
     * next member of that shape). The candidates that fit, in node order, are kept too and mended only where a node
     * changed: a 5,000-node plan otherwise walked every node's assessment again for each member. kube-scheduler's verdict
     * on a member is asked of these candidates only.
     */
    private static final class Judged {
        final PlacementPolicy.Assessment[] assessments;
        final BitSet changed = new BitSet();
        /** The fitting candidates and their nodes' indices, ascending; null until asked for. */
        private List<Candidate> usable;
        private int[] usableNodes;

        Judged(PlacementPolicy.Assessment[] assessments) {
            this.assessments = assessments;
        }

        void changed(int node) {
            changed.set(node);
        }

        /** The candidates of the nodes that fit, in node order, with the changed nodes' new assessments. */
        List<Candidate> usable() {
            if (usable == null) {
                usable = new ArrayList<>(assessments.length);
                usableNodes = new int[assessments.length];
                for (int i = 0; i < assessments.length; i++) {
                    if (assessments[i] instanceof PlacementPolicy.Fit fits) {
                        usableNodes[usable.size()] = i;
                        usable.add(fits.candidate());
                    }
                }
                return usable;
            }
            for (int node = changed.nextSetBit(0); node >= 0; node = changed.nextSetBit(node + 1)) {
                int at = Arrays.binarySearch(usableNodes, 0, usable.size(), node);
                var candidate = assessments[node] instanceof PlacementPolicy.Fit fits ? fits.candidate() : null;
                if (at >= 0 && candidate != null) {
                    usable.set(at, candidate);
                } else if (at >= 0) {
                    System.arraycopy(usableNodes, at + 1, usableNodes, at, usable.size() - at - 1);
                    usable.remove(at);
                } else if (candidate != null) {
                    int insert = -at - 1;
                    System.arraycopy(usableNodes, insert, usableNodes, insert + 1, usable.size() - insert);
                    usableNodes[insert] = node;
                    usable.add(insert, candidate);
                }
            }
            return usable;
        }
    }

    /** Why each node refuses the member, counted by reason: worked out only for a member that fits no node. */
    private static Map<String, Integer> refusals(PodRequest member, List<NodeState> states, PlacementPolicy.Assessment[] assessments,
                                                 MemberFit fit, List<Seat> seats) {
        var refusals = new LinkedHashMap<String, Integer>();
        for (int i = 0; i < states.size(); i++) {
            if (assessments[i] instanceof PlacementPolicy.Misfit misfit) {
                refusals.merge(misfit.rejection().reason(), 1, Integer::sum);
            } else if (!fit.fits(member, states.get(i).name(), seats)) {
                refusals.merge("kube-scheduler's own filters refuse it there", 1, Integer::sum);
            }
        }
        return refusals;
    }

    /** The member's context with the members planned before it as its peers and those after it as still waiting. */
    private static PlacementContext context(Job job, PodRequest member, List<PeerLocation> planned, List<WaitingPeer> after) {
        var base = job.context().apply(member);
        var peers = new ArrayList<PeerLocation>(base.peers().size() + planned.size());
        peers.addAll(base.peers());
        peers.addAll(planned);
        return new PlacementContext(peers, base.volumes(), after);
    }

    /** "job ml/resnet: 4 pods need 8 GPUs (4 × 2), 5 free in all, at most 1 on one node": over the nodes before planning. */
    private static String need(Job job, List<PodRequest> order, List<NodeState> nodes) {
        var text = new StringBuilder("job ").append(job.key()).append(": ").append(order.size()).append(order.size() == 1 ? " pod" : " pods");
        int gpus = order.stream().mapToInt(PodRequest::gpuCount).sum();
        text.append(" need ").append(gpus).append(gpus == 1 ? " GPU" : " GPUs").append(" (").append(shapes(order)).append(")");
        int free = 0;
        int most = 0;
        for (var state : nodes) {
            free += state.freeCount();
            most = Math.max(most, state.freeCount());
        }
        return text.append(", ").append(free).append(" free in all, at most ").append(most).append(" on one node").toString();
    }

    /** "3 planned, then pod resnet-3 (2 GPUs) fits no node: 6 nodes: …": the member that found no node, and why. */
    private static String detail(List<Seat> seats, PodRequest member, List<NodeState> states, Map<String, Integer> refusals) {
        var text = new StringBuilder(seats.isEmpty() ? "" : seats.size() + " planned, then ");
        text.append("pod ").append(member.name()).append(" (").append(member.gpuCount()).append(member.gpuCount() == 1 ? " GPU" : " GPUs")
                .append(") fits no node: ");
        var ranked = refusals.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(3).toList();
        for (int i = 0; i < ranked.size(); i++) {
            var entry = ranked.get(i);
            text.append(i == 0 ? "" : "; ").append(entry.getValue()).append(entry.getValue() == 1 ? " node: " : " nodes: ").append(entry.getKey());
        }
        if (refusals.size() > ranked.size()) {
            text.append("; …");
        }
        if (states.isEmpty()) {
            text.append("no nodes");
        }
        return text.toString();
    }

    /** "4 × 2" or "2 × 4 + 1 × 0": how many members ask for how many GPUs, largest first. */
    private static String shapes(List<PodRequest> order) {
        var counts = new LinkedHashMap<Integer, Integer>();
        order.forEach(pod -> counts.merge(pod.gpuCount(), 1, Integer::sum));
        var parts = new ArrayList<String>();
        counts.forEach((gpus, pods) -> parts.add(pods + " × " + gpus));
        return String.join(" + ", parts);
    }
}
