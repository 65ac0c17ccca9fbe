package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.BoundPods;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.job.ArrivalOrder;
import io.hetgpu.extender.job.AssessmentsBetweenPlans;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.job.JobSource;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.gpu.Quote;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The verbs' side of whole jobs: which pods belong to a job of several, whether the job has a plan, and what the pod
 * that asks is to do. The first pod of a job that reaches the filter has every pod of the job that no node holds
 * planned at once ({@link JobPlanner}); the plan's GPUs are held ({@link JobHolds}) and each member is steered to its
 * seat until it is bound or the plan's deadline passes. A job that cannot be placed whole is refused with what it
 * lacks, and holds nothing. A job is only planned once all its members exist (where its size is known): a job half
 * created would be placed half.
 *
 * <p>Planning runs one job at a time (kube-scheduler asks about one pod at a time anyway): two plans made at once
 * could both count the same free GPUs.
 */
public final class WholeJobs {

    /** What the pod asking is to do. */
    public sealed interface Verdict permits Alone, Steered, Refused {
    }

    /** Not a member of a job of several (or no API server to list its members): placed as one pod. */
    public record Alone() implements Verdict {
    }

    /** A member of a planned job: it goes to its seat, nowhere else. */
    public record Steered(String jobKey, JobHolds.Hold hold) implements Verdict {
    }

    /** A member of a job that cannot be placed whole now (or not yet whole): refused everywhere, with the reason. */
    public record Refused(String reason) implements Verdict {
    }

    private static final Alone ALONE = new Alone();
    /** The conventions that name a gang with its minimum: their count is required, not guessed from the pods that exist. */
    private static final Set<JobSource> GANG_GROUPS = EnumSet.of(
            JobSource.KUBE_POD_GROUP, JobSource.KUBE_WORKLOAD,
            JobSource.VOLCANO_POD_GROUP, JobSource.COSCHEDULING_POD_GROUP);

    /** What whole-job placement needs from the extender's setup: job sizes, how long a plan holds, who hears a plan end. */
    public record Settings(JobSizes sizes, Duration deadline, JobHolds.Listener listener) {
        /** As shipped: a plan holds its GPUs for a minute. */
        public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);
        public static final Settings DEFAULTS = new Settings(JobSizes.STATED_ONLY, DEFAULT_DEADLINE, JobHolds.Listener.NONE);
    }

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final JobPlanner planner;
    private final JobSizes sizes;
    private final JobHolds holds;
    /** Told of each member's scores when its job is planned: kube-scheduler asks no prioritize of a pod kept on one node. */
    private final BiConsumer<PodRequest, ScoreTable> onPlanned;
    /** The nodes' assessments from one plan to the next (used under {@code this}, as plans are made one at a time). */
    private final AssessmentsBetweenPlans assessments = new AssessmentsBetweenPlans();
    private final LongAdder heldBackForHeadroom = new LongAdder();
    private volatile SnapshotStates snapshotStates = SnapshotStates.NONE;
    /** Whether the jobs a restart left half-bound have been seated (once, at the first filter). */
    private volatile boolean reseated;

    public WholeJobs(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, JobPlanner planner, JobSizes sizes,
                     JobHolds holds) {
        this(cluster, parser, nodes, planner, sizes, holds, (pod, table) -> { });
    }

    public WholeJobs(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, JobPlanner planner, JobSizes sizes,
                     JobHolds holds, BiConsumer<PodRequest, ScoreTable> onPlanned) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.planner = planner;
        this.sizes = sizes;
        this.holds = holds;
        this.onPlanned = onPlanned;
    }

    /** Whole jobs over the cluster view, with the policy's planner and a deadline for plans. */
    public static WholeJobs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                               Settings settings, Clock clock) {
        return of(cluster, parser, nodes, policy, settings, clock, (pod, table) -> { });
    }

    /**
     * The same, with {@code onPlanned} told of each member's scores when its job is planned, as the prioritize verb tells
     * of a pod's (the placement Event that explains a pod's node, the placement metrics): a member is kept on its seat's
     * node alone, so kube-scheduler, with one node left, asks no prioritize of it.
     */
    public static WholeJobs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                               Settings settings, Clock clock, BiConsumer<PodRequest, ScoreTable> onPlanned) {
        return new WholeJobs(cluster, parser, nodes, new JobPlanner(policy), settings.sizes(),
                new JobHolds(clock, settings.deadline(), settings.listener()), onPlanned);
    }

    /** Every pod placed alone, as before whole jobs: for callers that build pods by hand and know no jobs. */
    public static WholeJobs off() {
        return new WholeJobs(ClusterView.REQUEST_ONLY, null, null, null, JobSizes.STATED_ONLY,
                new JobHolds(Clock.systemUTC(), Settings.DEFAULT_DEADLINE, JobHolds.Listener.NONE));
    }

    public JobHolds holds() {
        return holds;
    }

    /**
     * The filter's question: where may the pod go? Plans its job when it has no plan (or one that no longer stands), with
     * the pod itself placed only on {@code offered} (the nodes kube-scheduler found feasible and asks about).
     *
     * @param closed the tiers closed to a member, as the filter closes them
     */
    public Verdict judge(Pod pod, PodRequest request, NodeState[] offered, Function<PodRequest, ClosedTier> closed) {
        // A pod without a UID was written by hand, not read from the API server: nothing to hold a seat under.
        if (!cluster.knowsNodes() || request.uid().isEmpty()) {
            return ALONE;
        }
        var job = membershipOf(pod);
        if (job == null) {
            return ALONE;
        }
        var members = members(job, pod);
        var known = sizes.membersOf(job);
        var notYet = notYetPlanned(job, known, members.size());
        if (!notYet.isEmpty()) {
            return new Refused(notYet);
        }
        if (known.isPresent() && known.getAsInt() <= 1 || known.isEmpty() && members.size() <= 1) {
            return ALONE;
        }
        synchronized (this) {
            holds.sweep(this::bound);
            var plan = holds.planOf(job.key());
            if (plan != null) {
                var hold = plan.holdOf(request.uid());
                var broken = hold == null ? "pod " + request.name() + " is not in it" : brokenSeat(hold, offered);
                if (broken.isEmpty()) {
                    return new Steered(job.key(), hold);
                }
                holds.release(job.key(), broken);
            }
            return plan(job, pod, request, members, offered, closed);
        }
    }

    /**
     * Ends the holds of members now bound, and the plans that are complete or past their deadline: asked before every
     * filter, so that a plan's end is seen (logged, counted) when it happens, not when its job next asks. The first time,
     * it first seats the jobs a restart caught half-bound ({@link #reseatHalfBoundJobs}).
     *
     * @param closed the tiers closed to a member, as the filter closes them
     */
    public void sweep(Function<PodRequest, ClosedTier> closed) {
        if (!reseated) {
            reseatHalfBoundJobs(closed);
        }
        if (holds.any()) {
            holds.sweep(this::bound);
        }
    }

    /**
     * Plans, before any filter is answered, every job with members bound and members waiting and no plan: what an
     * extender that stopped mid-plan leaves (its seats lived in its memory only). Without this, the first pod to reach
     * the restarted extender, of any job, could take the seats of the waiting members, and their job would wait
     * half-bound, holding the GPUs of its bound members, until that pod ends. The waiting members are seated on any node
     * the view knows, around the members bound, for a deadline of their own; a job that cannot be seated whole now holds
     * nothing and is planned when its next pod comes, as any job is.
     */
    private synchronized void reseatHalfBoundJobs(Function<PodRequest, ClosedTier> closed) {
        if (reseated || !cluster.knowsNodes()) {
            return;
        }
        reseated = true;
        for (var key : cluster.jobKeys()) {
            if (holds.planOf(key) != null) {
                continue;
            }
            var members = members(key);
            if (members.isEmpty() || members.stream().noneMatch(BoundPods::holdsResources)) {
                continue;
            }
            var membership = JobMembershipReader.read(members.getFirst(), new ArrayList<>());
            if (membership.isEmpty() || !ofSeveral(membership.get(), members.getFirst())) {
                continue;
            }
            if (!notYetPlanned(membership.get(), sizes.membersOf(membership.get()), members.size()).isEmpty()) {
                continue;
            }
            List<PodRequest> waiting;
            try {
                waiting = waiting(members, null, null);
            } catch (UnreadableMember e) {
                continue;
            }
            if (waiting.isEmpty()) {
                continue;
            }
            var outcome = planner.plan(new JobPlanner.Job(key, waiting, cluster::contextOf, closed), clusterStates(), JobPlanner.MemberFit.ANY,
                    assessments);
            if (outcome instanceof JobPlanner.Planned planned) {
                hold(key, planned);
            }
        }
    }

    /**
     * Why a job is not planned yet whatever the nodes hold, or "": a gang group whose member count cannot be read, or a
     * job of a known count of which fewer pods exist. The filter refuses its pods with it; a restart re-seats no such job.
     */
    private String notYetPlanned(JobMembership job, OptionalInt known, int members) {
        if (known.isEmpty() && GANG_GROUPS.contains(job.source())) {
            // A group a gang scheduler holds all or nothing names the minimum itself: placing the pods that exist
            // instead could start a part of it, which is what the group is there to prevent.
            return "job " + job.key() + ": its member count cannot be read (" + sizes.whyUnknown(job).orElse(job.size().describe())
                    + "); it is placed once it can, and holds no GPU until then";
        }
        if (known.isPresent() && members < known.getAsInt()) {
            return "job " + job.key() + ": " + members + " of its " + known.getAsInt() + " pods exist ("
                    + job.source().label() + "); it is placed once all exist, and holds no GPU until then";
        }
        return "";
    }

    /**
     * How many GPUs live plans hold now for pods the cluster view does not show bound yet: what a plan holds for nothing
     * but its pods to come. A member's own record holds its GPUs once it is bound, though its seat is only let go at the
     * next sweep, which comes with the next filter.
     */
    public int gpusHeld() {
        return holds.gpusHeld(uid -> !bound(uid));
    }

    /** Filter calls in which the policy's job headroom kept a job waiting: how often big jobs yield to the room kept. */
    public long heldBackForHeadroom() {
        return heldBackForHeadroom.sum();
    }

    /** The bind verb's question: the hold of this pod, or null when it has none (a pod alone, or a plan that ended). */
    public JobHolds.Hold holdOf(String podUid) {
        return holds.holdOf(podUid);
    }

    /**
     * Whether a filter for the pod would plan its job now: it belongs to a job of several members that holds no plan.
     * Such a filter weighs every node of the cluster, not only those it names.
     */
    public boolean wouldPlan(Pod pod) {
        if (!cluster.knowsNodes() || pod.getMetadata() == null || pod.getMetadata().getUid() == null) {
            return false;
        }
        var membership = JobMembershipReader.read(pod, new ArrayList<>());
        return membership.isPresent() && ofSeveral(membership.get(), pod) && holds.planOf(membership.get().key()) == null;
    }

    /** Whether the pod belongs to a job of several members that it would be planned with. */
    public boolean inJob(Pod pod) {
        if (!cluster.knowsNodes()) {
            return false;
        }
        var membership = JobMembershipReader.read(pod, new ArrayList<>());
        return membership.isPresent() && ofSeveral(membership.get(), pod);
    }

    /** Whether the pod's job has several members: by its known size, else by the pods of it that exist. */
    private boolean ofSeveral(JobMembership job, Pod pod) {
        var known = sizes.membersOf(job);
        return known.isPresent() ? known.getAsInt() > 1 : members(job, pod).size() > 1;
    }

    /**
     * The preempt verb's question for a member of a job of several: which lower-priority pods, evicted, let the whole job
     * start ({@link JobPreemption}); null for a pod placed alone.
     */
    public JobPreemptionStep.Answer preemption(Pod pod, PodRequest request, Function<PodRequest, ClosedTier> closed, Instant now) {
        if (!cluster.knowsNodes() || request.uid().isEmpty()) {
            return null;
        }
        var membership = JobMembershipReader.read(pod, new ArrayList<>());
        if (membership.isEmpty() || !ofSeveral(membership.get(), pod)) {
            return null;
        }
        var job = membership.get();
        List<PodRequest> waiting;
        try {
            waiting = waiting(members(job, pod), pod, request);
        } catch (UnreadableMember e) {
            return new JobPreemptionStep.Nothing(e.getMessage());
        }
        var plannedJob = new JobPlanner.Job(job.key(), waiting, cluster::contextOf, closed);
        return new JobPreemption(cluster, nodes).answer(states -> planner.plan(plannedJob,
                states.stream().map(state -> state.withTaken(holds.heldOn(state.name(), ""))).toList(), JobPlanner.MemberFit.ANY),
                request.specPriority(), waiting.stream().anyMatch(planner::wantsNewest), now);
    }

    /**
     * The job's pods that count as members: every pod of it not failed nor being deleted, in the order they reached
     * kube-scheduler's queue: the planner seats members of one size in the order given, and a view lists them in no set
     * order, so without it two replicas could seat the same job differently.
     */
    private List<Pod> members(String jobKey) {
        var members = new ArrayList<Pod>();
        for (var pod : cluster.jobPods(jobKey)) {
            if (!isFailedOrDeleting(pod)) {
                members.add(pod);
            }
        }
        members.sort(ArrivalOrder.PODS);
        return members;
    }

    /** The same, the asking pod included. */
    private List<Pod> members(JobMembership job, Pod asking) {
        var members = members(job.key());
        var uid = asking.getMetadata() == null ? null : asking.getMetadata().getUid();
        if (uid == null || !holdsUid(members, uid)) {
            // The informer may not hold the pod yet: the request does.
            members.add(asking);
            members.sort(ArrivalOrder.PODS);
        }
        return members;
    }

    private static boolean holdsUid(List<Pod> pods, String uid) {
        for (var pod : pods) {
            if (uid.equals(pod.getMetadata().getUid())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The job the pod says it is in, or null. The pod read last is asked again: the request reader hands out the same Pod
     * for the same JSON, and kube-scheduler asks filter of a pod again and again while it waits.
     */
    private JobMembership membershipOf(Pod pod) {
        var last = lastMembership;
        if (last.pod() == pod) {
            return last.job();
        }
        var job = JobMembershipReader.read(pod, new ArrayList<>()).orElse(null);
        lastMembership = new Membership(pod, job);
        return job;
    }

    /** @param job null where the pod is in no job */
    private record Membership(Pod pod, JobMembership job) {
    }

    private volatile Membership lastMembership = new Membership(null, null);

    /** A member that cannot be read as a pod request: its job cannot be planned until it can. */
    private static final class UnreadableMember extends Exception {
        UnreadableMember(Pod pod, InvalidPodRequestException cause) {
            super("its pod " + pod.getMetadata().getName() + " cannot be placed: " + cause.getMessage(), cause);
        }
    }

    /** The members still waiting for a node, as requests; {@code request} stands for {@code asking} (both null when no pod asks). */
    private List<PodRequest> waiting(List<Pod> members, Pod asking, PodRequest request) throws UnreadableMember {
        var waiting = new ArrayList<PodRequest>();
        for (var pod : members) {
            if (asking != null && (pod == asking || request.uid().equals(pod.getMetadata().getUid()))) {
                waiting.add(request);
            } else if (BoundPods.waitsForNode(pod)) {
                try {
                    waiting.add(parser.parse(pod));
                } catch (InvalidPodRequestException e) {
                    throw new UnreadableMember(pod, e);
                }
            }
        }
        return waiting;
    }

    private static boolean isFailedOrDeleting(Pod pod) {
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Failed".equals(phase) || pod.getMetadata().getDeletionTimestamp() != null;
    }

    /** Why the hold no longer stands ("" when it does): its node is not offered, or its devices are taken. */
    private String brokenSeat(JobHolds.Hold hold, NodeState[] offered) {
        for (var state : offered) {
            if (state.name().equals(hold.node())) {
                long taken = hold.mask() & ~state.freeMask();
                return taken == 0 ? "" : "node " + hold.node() + " no longer has the planned GPUs of pod " + hold.podName() + " free";
            }
        }
        return "kube-scheduler no longer offers node " + hold.node() + " for pod " + hold.podName();
    }

    private boolean bound(String uid) {
        var pod = cluster.podByUid(uid);
        return pod == null || pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty();
    }

    private Verdict plan(JobMembership job, Pod asking, PodRequest request, List<Pod> members, NodeState[] offered,
                         Function<PodRequest, ClosedTier> closed) {
        List<PodRequest> waiting;
        try {
            waiting = waiting(members, asking, request);
        } catch (UnreadableMember e) {
            return new Refused("job " + job.key() + ": " + e.getMessage());
        }
        var states = clusterStates();
        var whole = new JobPlanner.Job(job.key(), waiting, cluster::contextOf, closed);
        // Only a job with no member on a node waits for room: one with members bound would hold their GPUs meanwhile.
        if (waiting.size() == members.size()) {
            var heldBack = planner.heldBack(whole, states);
            if (!heldBack.isEmpty()) {
                heldBackForHeadroom.increment();
                return new Refused(heldBack);
            }
        }
        var offeredNames = HashSet.<String>newHashSet(offered.length);
        for (var state : offered) {
            offeredNames.add(state.name());
        }
        var outcome = planner.plan(whole, states, new OfferedTo(request, offeredNames), assessments);
        return switch (outcome) {
            // Said before the detail, which can be long: a node's reason is cut at a few hundred characters.
            case JobPlanner.Lacking lacking -> new Refused(lacking.need() + "; no GPU is held for it; " + lacking.detail());
            case JobPlanner.Planned planned -> {
                var own = hold(job.key(), planned).holdOf(request.uid());
                yield new Steered(job.key(), own);
            }
        };
    }

    /** Holds the plan's seats until its deadline, and tells of each member's scores. */
    private JobHolds.HeldPlan hold(String jobKey, JobPlanner.Planned planned) {
        var held = planned.seats().stream()
                .map(seat -> new JobHolds.Hold(seat.member().uid(), seat.member().name(), seat.nodeName(), seat.mask(), seat.devices()))
                .toList();
        var plan = holds.hold(jobKey, held);
        planned.seats().forEach(seat -> onPlanned.accept(seat.member(), seat.scores()));
        return plan;
    }

    /** Every node the view knows, with the GPUs of other jobs' plans taken. */
    private List<NodeState> clusterStates() {
        var snapshot = cluster.nodes();
        var known = snapshotStates;
        if (known.snapshot() != snapshot) {
            known = SnapshotStates.of(snapshot, nodes, known);
            snapshotStates = known;
        }
        var states = new ArrayList<>(known.states());
        for (int at : known.changingWithTime()) {
            states.set(at, nodes.state(snapshot.facts(at), snapshot.boundPods(at)));
        }
        for (var node : holds.nodesHeld()) {
            int at = snapshot.positionOf(node);
            if (at >= 0) {
                states.set(at, states.get(at).withTaken(holds.heldOn(node, "")));
            }
        }
        return states;
    }

    /**
     * Every node's state in one cluster snapshot, before plans take their GPUs: the same until the snapshot changes, but
     * for the nodes with a bind in flight, whose state changes as its record ages. A 5,000-node filter of a job's pod
     * then takes the states as they are instead of looking each node up by name. A new snapshot with the same positions
     * (a pod bound, a node's facts replaced) keeps the states of the nodes whose facts and pods it still holds.
     *
     * @param changingWithTime the positions of the nodes with a bind in flight, whose states are made anew each time
     */
    private record SnapshotStates(NodeSnapshot snapshot, List<NodeState> states, int[] changingWithTime) {
        static final SnapshotStates NONE = new SnapshotStates(NodeSnapshot.EMPTY, List.of(), new int[0]);

        static SnapshotStates of(NodeSnapshot snapshot, NodeStateFactory nodes, SnapshotStates before) {
            var states = new ArrayList<NodeState>(snapshot.size());
            var changing = new ArrayList<Integer>();
            var old = before.snapshot();
            boolean samePositions = snapshot.samePositions(old);
            for (int i = 0; i < snapshot.size(); i++) {
                boolean unchanged = samePositions && old.facts(i) == snapshot.facts(i) && old.boundPods(i) == snapshot.boundPods(i);
                states.add(unchanged ? before.states().get(i) : nodes.state(snapshot.facts(i), snapshot.boundPods(i)));
                if (NodeStateFactory.changesWithTime(snapshot.boundPods(i))) {
                    changing.add(i);
                }
            }
            return new SnapshotStates(snapshot, List.copyOf(states), changing.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    /** How a steered pod's other nodes are refused, when a reason is given at all. */
    static String steeredElsewhere(Steered steered) {
        return "job " + Quote.of(steered.jobKey()) + " is planned whole: pod " + steered.hold().podName() + " goes to node "
                + steered.hold().node();
    }

    /**
     * The nodes kube-scheduler offered the pod that asks: only one of them can be its seat (the others passed its own
     * filters, which the extender does not judge). The other members are not judged here; kube-scheduler judges each when
     * it comes.
     */
    private record OfferedTo(PodRequest request, Set<String> offered) implements JobPlanner.MemberFit {

        @Override
        public boolean fits(PodRequest member, String node, List<JobPlanner.Seat> planned) {
            return member != request || offered.contains(node);
        }

        @Override
        public boolean judges(PodRequest member) {
            return member == request;
        }
    }
}
