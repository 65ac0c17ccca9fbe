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
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
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

    /**
     * What whole-job placement needs from the extender's setup: job sizes, how long a plan holds, who hears a plan end, and
     * the bounds that keep one job from taking the extender: the most pods a job planned whole may have, how long a plan
     * may take, and the schedulers whose pods count as members (empty: any).
     */
    public record Settings(JobSizes sizes, Duration deadline, JobHolds.Listener listener, int maxJobPods, Duration planBudget,
                           Set<String> schedulerNames) {
        /** As shipped: a plan holds its GPUs for a minute. */
        public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);
        /** As shipped: jobs of up to 4,096 pods, as large as real training jobs get, are planned whole. */
        public static final int DEFAULT_MAX_JOB_PODS = io.hetgpu.extender.ExtenderConfig.DEFAULT_MAX_JOB_PODS;
        /** As shipped: a plan may take 3 s, within kube-scheduler's default httpTimeout of 5 s for the filter that plans. */
        public static final Duration DEFAULT_PLAN_BUDGET = Duration.ofSeconds(3);
        public static final Settings DEFAULTS = new Settings(JobSizes.STATED_ONLY, DEFAULT_DEADLINE, JobHolds.Listener.NONE);

        public Settings {
            java.util.Objects.requireNonNull(sizes, "sizes");
            java.util.Objects.requireNonNull(deadline, "deadline");
            java.util.Objects.requireNonNull(listener, "listener");
            if (maxJobPods < 2) {
                throw new IllegalArgumentException("maxJobPods must be at least 2, got " + maxJobPods);
            }
            if (planBudget.isNegative() || planBudget.isZero()) {
                throw new IllegalArgumentException("planBudget must be above 0, got " + planBudget);
            }
            schedulerNames = Set.copyOf(schedulerNames);
        }

        /** With the shipped bounds, and pods of any scheduler counted as members. */
        public Settings(JobSizes sizes, Duration deadline, JobHolds.Listener listener) {
            this(sizes, deadline, listener, DEFAULT_MAX_JOB_PODS, DEFAULT_PLAN_BUDGET, Set.of());
        }
    }

    /**
     * How long a filter after a start goes on seating the jobs a restart left half-bound before it answers its own pod
     * (a plan begun goes on within its budget); the next filters go on where it stopped. A cluster of thousands of such
     * jobs (a namespace can make them) must not hold the first pods back for seconds.
     */
    static final Duration RESEAT_SLICE = Duration.ofMillis(200);

    /** How many refused jobs are remembered, so that they are not planned again while nothing changes. */
    static final int REMEMBERED_REFUSALS = 1024;

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
    /** Whether the jobs a restart left half-bound have been seated (at the first filters, a slice at a time). */
    private volatile boolean reseated;
    /** The keys of the jobs still to look at for a re-seat; null until the first sweep (used under {@code this}). */
    private java.util.Iterator<String> reseatQueue;
    private final int maxJobPods;
    private final Duration planBudget;
    private final Set<String> schedulerNames;
    /** Jobs refused for what the cluster lacks, by key, while nothing has changed since (used under {@code this}). */
    private final java.util.LinkedHashMap<String, RememberedRefusal> refusals = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<String, RememberedRefusal> eldest) {
            return size() > REMEMBERED_REFUSALS;
        }
    };

    /**
     * A job's refusal and what it was made over: the nodes (a snapshot is replaced whenever a node or a GPU pod changes),
     * the GPUs free on them (other plans' seats and binds in flight taken, which change without a new snapshot), the job's
     * pods, and (where the member asking was the one that found no node) the nodes offered to it.
     */
    private record RememberedRefusal(NodeSnapshot nodes, long free, long members, long offered, String reason) {
    }

    public WholeJobs(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, JobPlanner planner, JobSizes sizes,
                     JobHolds holds) {
        this(cluster, parser, nodes, planner, sizes, holds, (pod, table) -> { });
    }

    public WholeJobs(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, JobPlanner planner, JobSizes sizes,
                     JobHolds holds, BiConsumer<PodRequest, ScoreTable> onPlanned) {
        this(cluster, parser, nodes, planner, new Settings(sizes, holds.deadline(), JobHolds.Listener.NONE), holds, onPlanned);
    }

    private WholeJobs(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, JobPlanner planner, Settings settings,
                      JobHolds holds, BiConsumer<PodRequest, ScoreTable> onPlanned) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.planner = planner;
        this.sizes = settings.sizes();
        this.holds = holds;
        this.onPlanned = onPlanned;
        this.maxJobPods = settings.maxJobPods();
        this.planBudget = settings.planBudget();
        this.schedulerNames = settings.schedulerNames();
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
        return new WholeJobs(cluster, parser, nodes, new JobPlanner(policy), settings,
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
        var tooLarge = tooLarge(job, known, members.size());
        if (!tooLarge.isEmpty()) {
            return new Refused(tooLarge);
        }
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
                if (hold != null) {
                    var moved = moveSeat(plan, hold, request, offered, closed);
                    if (moved != null) {
                        return new Steered(job.key(), moved);
                    }
                }
                holds.release(job.key(), broken);
            }
            return plan(job, pod, request, members, offered, closed);
        }
    }

    /**
     * Why the job is too large to be planned whole ("" when it is not): a plan's time and memory grow with its pods, and
     * the pods of one namespace must not be able to take the extender that every namespace's pods wait on.
     */
    private String tooLarge(JobMembership job, OptionalInt known, int members) {
        int size = Math.max(members, known.orElse(0));
        return size <= maxJobPods ? "" : "job " + Quote.of(job.key()) + " has " + size + " pods, more than the " + maxJobPods
                + " a job may have to be placed whole (the extender's maxJobPods); it holds no GPU";
    }

    /**
     * The member's seat moved to the best of the nodes kube-scheduler offers it, the other seats of its plan kept, or null
     * when none of them can take it. A plan seats every member over every node, but only kube-scheduler knows each
     * member's own filters (a node selector, taints, cpu): a job whose pods are each pinned to a node would otherwise be
     * planned anew at the filter of each of its members. Where the plan's own seats fill the offered nodes, the members
     * of those seats give them up and are seated again over every node, as the plan would have seated them.
     */
    private JobHolds.Hold moveSeat(JobHolds.HeldPlan plan, JobHolds.Hold hold, PodRequest request, NodeState[] offered,
                                   Function<PodRequest, ClosedTier> closed) {
        var offeredNames = HashSet.<String>newHashSet(offered.length);
        for (var state : offered) {
            offeredNames.add(state.name());
        }
        var others = plan.holds().stream().filter(other -> other != hold).toList();
        var moved = seatAmong(plan.jobKey(), request, List.of(offered), others, closed);
        var displaced = List.<JobHolds.Hold>of();
        if (moved == null) {
            // The plan's own seats on the offered nodes give way: their members have every node to go to, this one not.
            displaced = others.stream().filter(other -> offeredNames.contains(other.node())).toList();
            if (displaced.isEmpty()) {
                return null;
            }
            var freed = new ArrayList<NodeState>(offered.length);
            for (var state : offered) {
                long mask = 0;
                for (var other : displaced) {
                    mask |= other.node().equals(state.name()) ? other.mask() : 0;
                }
                freed.add(state.withFreed(mask & freeBeforePlans(state.name())));
            }
            var giving = displaced;
            var kept = others.stream().filter(other -> !giving.contains(other)).toList();
            moved = seatAmong(plan.jobKey(), request, freed, kept, closed);
            if (moved == null) {
                return null;
            }
        }
        var seats = new ArrayList<JobPlanner.Seat>();
        seats.add(moved);
        if (!displaced.isEmpty()) {
            var reseated = reseatDisplaced(plan, hold, displaced, heldAs(moved), closed);
            if (reseated == null) {
                return null;
            }
            seats.addAll(reseated);
        }
        if (holds.move(plan.jobKey(), seats.stream().map(WholeJobs::heldAs).toList()) == null) {
            return null;
        }
        // Told only of seats held: a move given up explains nothing.
        seats.forEach(seat -> onPlanned.accept(seat.member(), seat.scores()));
        return heldAs(moved);
    }

    /** A planned seat as its plan holds it. */
    private static JobHolds.Hold heldAs(JobPlanner.Seat seat) {
        return new JobHolds.Hold(seat.member().uid(), seat.member().name(), seat.nodeName(), seat.mask(), seat.devices());
    }

    /** The seat the policy gives {@code member} among {@code states}, beside the plan's {@code seated} members, or null. */
    private JobPlanner.Seat seatAmong(String jobKey, PodRequest member, List<NodeState> states, List<JobHolds.Hold> seated,
                            Function<PodRequest, ClosedTier> closed) {
        var outcome = planner.plan(new JobPlanner.Job(jobKey, List.of(member), withSeats(seated), closed), states, JobPlanner.MemberFit.ANY);
        return outcome instanceof JobPlanner.Planned planned ? planned.seats().getFirst() : null;
    }

    /** The displaced members seated again over every node, or null where one of them fits nowhere now. */
    private List<JobPlanner.Seat> reseatDisplaced(JobHolds.HeldPlan plan, JobHolds.Hold asking, List<JobHolds.Hold> displaced, JobHolds.Hold moved,
                                     Function<PodRequest, ClosedTier> closed) {
        var members = new ArrayList<PodRequest>(displaced.size());
        for (var other : displaced) {
            var pod = cluster.podByUid(other.podUid());
            if (pod == null) {
                return null;
            }
            try {
                members.add(parser.parse(pod));
            } catch (InvalidPodRequestException e) {
                return null;
            }
        }
        // Every node with every plan's seats taken, then this plan's moving seats given back and the new one taken.
        var snapshot = snapshotStates().snapshot();
        var states = new ArrayList<>(clusterStates());
        var giveBack = new ArrayList<>(displaced);
        giveBack.add(asking);
        for (var other : giveBack) {
            int at = snapshot.positionOf(other.node());
            if (at >= 0) {
                states.set(at, states.get(at).withFreed(other.mask() & freeBeforePlans(other.node())));
            }
        }
        int at = snapshot.positionOf(moved.node());
        if (at >= 0) {
            states.set(at, states.get(at).withTaken(moved.mask()));
        }
        var kept = new ArrayList<>(plan.holds().stream().filter(other -> other != asking && !displaced.contains(other)).toList());
        kept.add(moved);
        var outcome = planner.plan(new JobPlanner.Job(plan.jobKey(), members, withSeats(kept), closed), states, JobPlanner.MemberFit.ANY);
        return outcome instanceof JobPlanner.Planned planned ? planned.seats() : null;
    }

    /** Members' contexts with the plan's {@code seated} members counted as the job's pods where their seats are. */
    private Function<PodRequest, PlacementContext> withSeats(List<JobHolds.Hold> seated) {
        var contexts = new JobContexts(cluster);
        var known = snapshotStates();
        var peers = new ArrayList<PeerLocation>(seated.size());
        for (var other : seated) {
            int at = known.snapshot().positionOf(other.node());
            if (at >= 0) {
                var node = known.states().get(at);
                peers.add(new PeerLocation(other.podName(), other.node(), node.rack(), node.zone()));
            }
        }
        return member -> {
            var base = contexts.apply(member);
            var all = new ArrayList<PeerLocation>(base.peers().size() + peers.size());
            all.addAll(base.peers());
            all.addAll(peers);
            return new PlacementContext(all, base.volumes(), base.waiting());
        };
    }

    /**
     * Ends the holds of members now bound, and the plans that are complete or past their deadline: asked before every
     * filter, so that a plan's end is seen (logged, counted) when it happens, not when its job next asks. Until the jobs a
     * restart caught half-bound have been seated ({@link #reseatHalfBoundJobs}), it first goes on seating them, for a
     * slice of time at most.
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

    /** Whether the jobs a restart left half-bound have all been looked at (and seated where they could be). */
    public boolean reseated() {
        return reseated;
    }

    /**
     * Plans, before any filter is answered, every job with members bound and members waiting and no plan: what an
     * extender that stopped mid-plan leaves (its seats lived in its memory only). Without this, the first pod to reach
     * the restarted extender, of any job, could take the seats of the waiting members, and their job would wait
     * half-bound, holding the GPUs of its bound members, until that pod ends. The waiting members are seated on any node
     * the view knows, around the members bound, for a deadline of their own; a job that cannot be seated whole now holds
     * nothing and is planned when its next pod comes, as any job is. A call starts no job's re-seat once it has worked
     * for {@link #RESEAT_SLICE}, and the next goes on where it stopped: however many jobs a cluster holds, a filter
     * waits that long, and at most one plan's budget more.
     */
    private synchronized void reseatHalfBoundJobs(Function<PodRequest, ClosedTier> closed) {
        if (reseated || !cluster.knowsNodes()) {
            return;
        }
        if (reseatQueue == null) {
            reseatQueue = List.copyOf(cluster.jobKeys()).iterator();
        }
        var slice = JobPlanner.Budget.from(RESEAT_SLICE);
        while (reseatQueue.hasNext() && !slice.spent()) {
            reseat(reseatQueue.next(), closed);
        }
        if (!reseatQueue.hasNext()) {
            reseated = true;
            reseatQueue = null;
        }
    }

    /** Seats the waiting members of the job of this key, where a restart left it half-bound. */
    private void reseat(String key, Function<PodRequest, ClosedTier> closed) {
        if (holds.planOf(key) != null) {
            return;
        }
        var members = members(key);
        // Only members on a node the view knows hold GPUs a seat must be kept near: a pod bound by hand to a node that
        // does not exist holds nothing.
        if (members.isEmpty() || members.size() > maxJobPods
                || members.stream().noneMatch(pod -> BoundPods.holdsResources(pod) && cluster.nodes().positionOf(pod.getSpec().getNodeName()) >= 0)) {
            return;
        }
        var membership = JobMembershipReader.read(members.getFirst(), new ArrayList<>());
        if (membership.isEmpty() || !ofSeveral(membership.get(), members.getFirst())) {
            return;
        }
        if (!notYetPlanned(membership.get(), sizes.membersOf(membership.get()), members.size()).isEmpty()) {
            return;
        }
        List<PodRequest> waiting;
        try {
            waiting = waiting(members, null, null);
        } catch (UnreadableMember e) {
            return;
        }
        if (waiting.isEmpty()) {
            return;
        }
        // A plan's own budget, not what is left of the slice: a job half-bound by a restart is seated whole or not at all.
        var outcome = planner.plan(new JobPlanner.Job(key, waiting, new JobContexts(cluster), closed), clusterStates(), JobPlanner.MemberFit.ANY,
                assessments, JobPlanner.Budget.from(planBudget));
        if (outcome instanceof JobPlanner.Planned planned) {
            hold(key, planned);
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

    /** A filter call in which the job headroom kept a pod of several GPUs, in no job, waiting: counted with the jobs'. */
    void countHeldForRoom() {
        heldBackForHeadroom.increment();
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
        var members = members(job, pod);
        var tooLarge = tooLarge(job, sizes.membersOf(job), members.size());
        if (!tooLarge.isEmpty()) {
            return new JobPreemptionStep.Nothing(tooLarge);
        }
        List<PodRequest> waiting;
        try {
            waiting = waiting(members, pod, request);
        } catch (UnreadableMember e) {
            return new JobPreemptionStep.Nothing(e.getMessage());
        }
        var plannedJob = new JobPlanner.Job(job.key(), waiting, new JobContexts(cluster), closed);
        // One budget for every plan the answer weighs: kube-scheduler waits on the preempt call as on a filter.
        var budget = JobPlanner.Budget.from(planBudget);
        return new JobPreemption(cluster, nodes).answer(states -> planner.plan(plannedJob,
                states.stream().map(state -> state.withTaken(holds.heldOn(state.name(), ""))).toList(), JobPlanner.MemberFit.ANY,
                JobPlanner.KeptAssessments.NONE, budget),
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
            if (!isFailedOrDeleting(pod) && (!BoundPods.waitsForNode(pod) || scheduledHere(pod))) {
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

    /**
     * Whether a pod that waits for a node is one of hetgpu's schedulers' to place: its {@code schedulerName} is one of
     * theirs and no scheduling gate holds it back. Any other pod no scheduler will send here (not yet, or never), and a
     * seat held for it would hold GPUs for nothing.
     */
    private boolean scheduledHere(Pod pod) {
        var spec = pod.getSpec();
        if (spec == null) {
            return false;
        }
        if (spec.getSchedulingGates() != null && !spec.getSchedulingGates().isEmpty()) {
            return false;
        }
        var scheduler = spec.getSchedulerName() == null || spec.getSchedulerName().isEmpty() ? "default-scheduler" : spec.getSchedulerName();
        return schedulerNames.isEmpty() || schedulerNames.contains(scheduler);
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
        var snapshot = snapshotStates().snapshot();
        var states = clusterStates();
        long freeNow = free(states);
        long membersNow = fingerprint(members);
        long offeredNow = fingerprint(offered);
        var remembered = refusals.get(job.key());
        if (remembered != null && remembered.nodes() == snapshot && remembered.free() == freeNow && remembered.members() == membersNow
                && (remembered.offered() == 0 || remembered.offered() == offeredNow)) {
            return new Refused(remembered.reason());
        }
        refusals.remove(job.key());
        List<PodRequest> waiting;
        try {
            waiting = waiting(members, asking, request);
        } catch (UnreadableMember e) {
            return new Refused("job " + job.key() + ": " + e.getMessage());
        }
        var whole = new JobPlanner.Job(job.key(), waiting, new JobContexts(cluster), closed);
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
        var outcome = planner.plan(whole, states, new OfferedTo(request, offeredNames), assessments, JobPlanner.Budget.from(planBudget));
        return switch (outcome) {
            case JobPlanner.Lacking lacking -> {
                // Said before the detail, which can be long: a node's reason is cut at a few hundred characters.
                var reason = lacking.need() + "; no GPU is held for it; " + lacking.detail();
                // The same job over the same nodes and plans would be refused the same way: each of its pods is told so at
                // once, not after a plan of its own, until a pod of it or the GPUs free change.
                refusals.put(job.key(), new RememberedRefusal(snapshot, freeNow, membersNow,
                        request.name().equals(lacking.member()) ? offeredNow : 0, reason));
                yield new Refused(reason);
            }
            case JobPlanner.Planned planned -> {
                var own = hold(job.key(), planned).holdOf(request.uid());
                yield new Steered(job.key(), own);
            }
        };
    }

    /** The GPUs free on every node, as one number: a bit of a mask freed or taken anywhere changes it. */
    private static long free(List<NodeState> states) {
        long print = states.size();
        for (var state : states) {
            print = print * 31 + state.freeMask();
        }
        return print;
    }

    /** The job's pods as they are now: their UIDs and versions (a pod changed in the API server is a new object). */
    private static long fingerprint(List<Pod> members) {
        long print = members.size();
        for (var pod : members) {
            print = print * 31 + java.util.Objects.hash(pod.getMetadata().getUid(), pod.getMetadata().getResourceVersion(),
                    System.identityHashCode(pod));
        }
        return print;
    }

    /** The nodes offered, by name; never 0 (0 marks a refusal that holds whatever the pod asking is offered). */
    private static long fingerprint(NodeState[] offered) {
        long print = offered.length + 1;
        for (var state : offered) {
            print = print * 31 + state.name().hashCode();
        }
        return print == 0 ? 1 : print;
    }

    /** Holds the plan's seats until its deadline, and tells of each member's scores. */
    private JobHolds.HeldPlan hold(String jobKey, JobPlanner.Planned planned) {
        var held = planned.seats().stream()
                .map(WholeJobs::heldAs)
                .toList();
        var plan = holds.hold(jobKey, held);
        planned.seats().forEach(seat -> onPlanned.accept(seat.member(), seat.scores()));
        return plan;
    }

    /** Every node the view knows, with the GPUs of other jobs' plans taken. */
    private List<NodeState> clusterStates() {
        var known = snapshotStates();
        var snapshot = known.snapshot();
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
     * The devices free on the node before any plan takes its seats: a seat given back frees only those of its devices
     * that no pod took behind the plan's back.
     */
    private long freeBeforePlans(String node) {
        var known = snapshotStates();
        var snapshot = known.snapshot();
        int at = snapshot.positionOf(node);
        if (at < 0) {
            return 0;
        }
        return NodeStateFactory.changesWithTime(snapshot.boundPods(at)) ? nodes.state(snapshot.facts(at), snapshot.boundPods(at)).freeMask()
                : known.states().get(at).freeMask();
    }

    /** The states of the view's nodes now, before plans take their GPUs. */
    private SnapshotStates snapshotStates() {
        var snapshot = cluster.nodes();
        var known = snapshotStates;
        if (known.snapshot() != snapshot) {
            known = SnapshotStates.of(snapshot, nodes, known);
            snapshotStates = known;
        }
        return known;
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
