package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * hetgpu's placement policy: device filters narrow each node's GPUs to those the pod accepts, node
 * filters decide whether the node fits, and weighted scorers rank the nodes that do. One API for every
 * caller: {@link #assessAll} judges nodes (the filter answer is the service's to shape), {@link #score}
 * ranks the ones that fit; {@code service.PolicyStep} chains them as a request does. A
 * {@link HighPriorityReserve} may also close the top tier to a pod, from the cluster-wide headroom the
 * caller counts. Pure: no I/O, no clocks, no state, so any replica gives the same answer to the same
 * request and the same headroom.
 */
public final class PlacementPolicy {

    private final List<DeviceFilter> deviceFilters;
    private final List<NodeFilter> nodeFilters = List.of(new GpuCountFilter(), new NvlinkFilter());
    private final List<NodeScorer> scorers;
    private final List<String> scorerNames;
    private final int[] weights;
    private final PriorityThresholds thresholds;
    private final HighPriorityReserve reserve;
    private final EvictionFloor evictionFloor;
    private final JobHeadroom jobHeadroom;
    private final ThroughputSource throughputs;
    /** The score of every fitting node when no scorer can tell them apart. */
    static final int NEUTRAL_SCORE = 5;

    /** The policy over the admin's throughput table alone ({@code settings.throughputs()}), which never changes. */
    public PlacementPolicy(PolicySettings settings) {
        this(settings, ThroughputSource.fixed(settings.throughputs()));
    }

    /**
     * The policy reading its workload speeds from {@code throughputs} on every request (what the extender learns, merged
     * with the admin's table): a new table changes answers without a new policy. {@code settings.throughputs()} is
     * then only what the source was made from.
     */
    public PlacementPolicy(PolicySettings settings, ThroughputSource throughputs) {
        this.thresholds = settings.thresholds();
        this.reserve = settings.reserve();
        this.evictionFloor = settings.evictionFloor();
        this.jobHeadroom = settings.jobHeadroom();
        this.throughputs = throughputs;
        this.deviceFilters = List.of(new CardModelFilter(), new MinimumCardFilter(), new ExcludedCardFilter(), new GpuMemoryFilter(),
                new ComputeCapabilityFilter(), new WorkloadSpeedFilter(throughputs));
        this.scorers = Scorers.all(thresholds, throughputs);
        this.scorerNames = scorers.stream().map(NodeScorer::name).toList();
        this.weights = scorers.stream().mapToInt(scorer -> settings.weights().of(scorer.name())).toArray();
    }

    /** A node judged for a pod: a candidate when it fits, else the rejection. */
    public sealed interface Assessment permits Fit, Misfit {
    }

    public record Fit(Candidate candidate) implements Assessment {
    }

    public record Misfit(String node, Verdict.Rejected rejection) implements Assessment {
    }

    /** The node judged for a pod that may not take the cards of the closed tier. */
    public Assessment assess(PodRequest pod, NodeState node, ClosedTier closed) {
        return assess(pod, node, new HashMap<>(), closed);
    }

    /** Which cards the pod prefers, from its annotations and priority. */
    public GpuPreference preferenceOf(PodRequest pod) {
        return TierPreference.of(pod, thresholds);
    }

    /** Where the policy reads workload speeds: the table now, and its version. */
    public ThroughputSource throughputs() {
        return throughputs;
    }

    /**
     * The version of the speed table this pod's assessment depends on: the table's for a pod that names a workload
     * class, 0 for one that does not (no table changes its answer). Memos of assessments are kept under it.
     */
    public long throughputVersion(PodRequest pod) {
        return pod.workload().isEmpty() ? 0 : throughputs.current().version();
    }

    /** Whether a reserve can close the top tier to some pods: only then does the cluster's headroom matter. */
    public boolean reservesTopTier() {
        return reserve.isOn();
    }

    /** Whether a high-priority pod may refuse free slower cards for faster ones preemption can free. */
    public boolean floorsEvictions() {
        return evictionFloor.isOn();
    }

    /**
     * The tiers an {@link EvictionFloor} closes to the pod, given the nodes as they would be with every lower-priority
     * pod's GPUs free ({@code reachable}): the best each offers is what preemption could free there.
     */
    public ClosedTier evictionFloor(PodRequest pod, Supplier<List<NodeState>> reachable) {
        // Only then is the cluster walked: the floor concerns high-priority pods alone.
        // A pod that may not preempt (preemptionPolicy: Never) would wait for the faster cards to free by themselves.
        if (!evictionFloor.isOn() || !pod.needsGpus() || !pod.preempts() || !TierPreference.isHighPriority(pod, thresholds)) {
            return ClosedTier.NONE;
        }
        var nodes = reachable.get();
        var candidates = new ArrayList<Candidate>();
        for (var assessment : assessAll(pod, nodes, ClosedTier.NONE)) {
            if (assessment instanceof Fit fit) {
                candidates.add(fit.candidate());
            }
        }
        var closed = evictionFloor.closedTo(pod, throughputs.current(), candidates);
        if (closed == ClosedTier.NONE) {
            return closed;
        }
        long open = 0;
        for (var node : nodes) {
            open += Long.bitCount(node.freeMask() & ~closed.mask(node));
        }
        return closed.withOpenReachable((int) Math.min(Integer.MAX_VALUE - 1, open));
    }

    /**
     * Why a job whose members all wait for a node waits for the room the {@link JobHeadroom} keeps, or "" when it may be
     * planned now ({@code nodes}: every node, with the GPUs of other jobs' plans taken).
     */
    public String heldBackForHeadroom(String jobKey, List<PodRequest> members, List<NodeState> nodes) {
        return jobHeadroom.heldBack(jobKey, members, nodes, thresholds);
    }

    /** Whether the job headroom may keep this pod waiting on its own ({@link JobHeadroom#concerns}): only then are the cluster's GPUs counted. */
    public boolean keepsRoomFrom(PodRequest pod) {
        return jobHeadroom.concerns(pod, thresholds);
    }

    /** Every card, closed to a pod of several GPUs below high priority while the cluster lacks the job headroom's room beyond it. */
    public ClosedTier heldForRoom(PodRequest pod, ClusterGpus gpus) {
        var reason = jobHeadroom.heldBack(pod, gpus, thresholds);
        return reason.isEmpty() ? ClosedTier.NONE : ClosedTier.everyCard(reason);
    }

    /** The tier the reserve closes to this pod while the cluster has this headroom. */
    public ClosedTier closedTier(PodRequest pod, TopTierHeadroom headroom) {
        return reserve.closedTo(pod, thresholds, headroom);
    }

    /**
     * @param admitted per request: whether a device kind passes every device filter, so that a request
     *                 over thousands of nodes of a handful of products checks each product once
     */
    private Assessment assess(PodRequest pod, NodeState node, Map<NodeGpus.DeviceKind, Boolean> admitted, ClosedTier closed) {
        var assessment = assessGpus(pod, node, admitted, closed);
        if (!pod.claimNote().isEmpty() && assessment instanceof Misfit misfit) {
            // What the extender did not read of the pod's claims: the refusal rests on the rest only.
            var rejection = misfit.rejection();
            return new Misfit(misfit.node(), new Verdict.Rejected(rejection.reason() + " (claims: " + pod.claimNote() + ")",
                    rejection.unresolvable()));
        }
        return assessment;
    }

    private Assessment assessGpus(PodRequest pod, NodeState node, Map<NodeGpus.DeviceKind, Boolean> admitted, ClosedTier closed) {
        if (!pod.needsGpus()) {
            return new Fit(Candidate.of(node, Candidate.NO_GPUS, 0, node.gpus().healthyMask()));
        }
        var gpus = node.gpus();
        if (!gpus.problem().isEmpty()) {
            return new Misfit(node.name(), Verdict.unresolvable(gpus.problem()));
        }
        long eligible = eligible(pod, gpus, admitted);
        long closedMask = closed == ClosedTier.NONE ? 0 : closed.mask(node) & eligible;
        if (closedMask == 0) {
            return judge(pod, node, eligible);
        }
        var open = judge(pod, node, eligible & ~closedMask);
        if (open instanceof Fit) {
            return open;
        }
        // Refused either way: the reason is the node's own unless the reserved cards alone stand in the way.
        var withReserved = judge(pod, node, eligible);
        return withReserved instanceof Fit ? new Misfit(node.name(), Verdict.retryable(closed.reasonFor(node))) : withReserved;
    }

    /**
     * The class of card the pod asks for, as the filters' reasons say it ("A100 or newer (tier 70 and up), at least 40 GiB
     * per GPU"); "" for a pod that asks nothing of its cards.
     */
    public String cardClass(PodRequest pod) {
        return String.join(", ", deviceFilters.stream().filter(filter -> filter.appliesTo(pod)).map(filter -> filter.requirement(pod)).toList());
    }

    /**
     * The node's healthy GPUs that pass every device filter for the pod, free or not: the cards of the class it asks for
     * (models, the weakest model, exclusions, memory, compute capability, workload speed), whatever their state now.
     */
    public long eligibleMask(PodRequest pod, NodeState node) {
        return node.gpus().problem().isEmpty() ? eligible(pod, node.gpus(), new HashMap<>()) : 0;
    }

    private long eligible(PodRequest pod, NodeGpus gpus, Map<NodeGpus.DeviceKind, Boolean> admitted) {
        long eligible = 0;
        var kinds = gpus.kinds();
        for (int k = 0; k < kinds.size(); k++) {
            var kind = kinds.get(k);
            var pass = admitted.get(kind);
            if (pass == null) {
                pass = admits(pod, kind, gpus.source().knowsModel());
                admitted.put(kind, pass);
            }
            if (pass) {
                eligible |= gpus.kindMasks()[k];
            }
        }
        return eligible & gpus.healthyMask();
    }

    /**
     * Whether cards of this kind pass every device filter for the pod. GPUs of unknown model take only pods that ask
     * nothing of the card: nothing can be checked. A loop, not a stream: a plan asks it of each node a seat changes.
     */
    private boolean admits(PodRequest pod, NodeGpus.DeviceKind kind, boolean modelKnown) {
        for (int f = 0; f < deviceFilters.size(); f++) {
            var filter = deviceFilters.get(f);
            if (modelKnown ? !filter.admits(pod, kind) : filter.appliesTo(pod)) {
                return false;
            }
        }
        return true;
    }

    /** The node for the pod, given its GPUs that pass every device filter. */
    private Assessment judge(PodRequest pod, NodeState node, long eligible) {
        var gpus = node.gpus();
        var fit = GpuFit.of(pod, node, eligible);
        if (Long.bitCount(eligible) < pod.gpuCount() && gpus.size() > 0) {
            // Only a node short of suitable GPUs needs to know which requirement ruled its cards out.
            for (var filter : deviceFilters) {
                if (filter.check(fit) instanceof Verdict.Rejected rejected) {
                    return new Misfit(node.name(), rejected);
                }
            }
        }
        for (var filter : nodeFilters) {
            if (filter.check(fit) instanceof Verdict.Rejected rejected) {
                return new Misfit(node.name(), rejected);
            }
        }
        var offer = fit.offer();
        if (offer == null) {
            return new Misfit(node.name(), Verdict.retryable("no set of " + pod.gpuCount() + " free GPUs"));
        }
        int weakest = Integer.MAX_VALUE;
        for (int position : offer.positions()) {
            weakest = Math.min(weakest, gpus.tiers().get(position).rank());
        }
        return new Fit(Candidate.of(node, offer, weakest, eligible));
    }

    /** Every node judged for a pod that may not take the cards of the closed tier. */
    public List<Assessment> assessAll(PodRequest pod, List<NodeState> nodes, ClosedTier closed) {
        var assessments = new ArrayList<Assessment>(nodes.size());
        var admitted = new HashMap<NodeGpus.DeviceKind, Boolean>();
        for (var node : nodes) {
            assessments.add(assess(pod, node, admitted, closed));
        }
        return assessments;
    }

    /** Scores from assessments made earlier for this pod: a row per assessment, in their order. */
    public ScoreTable score(PodRequest pod, List<Assessment> assessments, PlacementContext context) {
        var candidates = new ArrayList<Candidate>(assessments.size());
        for (var assessment : assessments) {
            if (assessment instanceof Fit fit) {
                candidates.add(fit.candidate());
            }
        }
        var fitting = scoreCandidates(pod, candidates, context);
        if (candidates.size() == assessments.size()) {
            return fitting;
        }
        var refusedNodes = new String[assessments.size()];
        var rejections = new String[assessments.size()];
        for (int i = 0; i < refusedNodes.length; i++) {
            if (assessments.get(i) instanceof Misfit misfit) {
                refusedNodes[i] = misfit.node();
                rejections[i] = misfit.rejection().reason();
            }
        }
        return ScoreTable.withRefusals(fitting, refusedNodes, rejections);
    }

    /** Scores of nodes that fit, a row per candidate in their order: what a planner that kept the candidates asks. */
    public ScoreTable scoreCandidates(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var columns = new double[scorers.size()][];
        int activeWeight = 0;
        var active = new boolean[scorers.size()];
        var scored = new HashMap<String, double[]>();
        for (int s = 0; s < scorers.size(); s++) {
            if (weights[s] == 0) {
                columns[s] = new double[candidates.size()];
            } else {
                columns[s] = scorers.get(s).score(pod, candidates, context, scored::get);
                scored.put(scorerNames.get(s), columns[s]);
            }
            // A scorer that gives every candidate the same value cannot rank them; leaving it out lets the
            // ones that can use the whole 0..10 range, which is what kube-scheduler weighs against its plugins.
            active[s] = weights[s] > 0 && spread(columns[s]);
            activeWeight += active[s] ? weights[s] : 0;
        }
        // A loop, not a stream: this runs for every request and every member of a planned job.
        var orders = new ArrayList<NodeScorer.ScoreOrder>(0);
        for (var scorer : scorers) {
            var order = scorer.order(pod, candidates);
            if (order != NodeScorer.ScoreOrder.NONE) {
                orders.add(order);
            }
        }

        // Column by column, in the scorers' order: each candidate's sum is added up as it would be row by row, and the
        // loops are over plain arrays (a plan sums thousands of candidates for each member).
        var sums = new double[candidates.size()];
        for (int s = 0; s < columns.length; s++) {
            if (active[s]) {
                var column = columns[s];
                double weight = weights[s];
                for (int index = 0; index < sums.length; index++) {
                    sums[index] += weight * column[index];
                }
            }
        }
        var scores = new int[candidates.size()];
        for (int index = 0; index < scores.length; index++) {
            int score = activeWeight == 0 ? NEUTRAL_SCORE : (int) Math.round(10 * sums[index] / activeWeight);
            for (int o = 0; o < orders.size(); o++) {
                score = orders.get(o).apply(candidates.get(index), score);
            }
            scores[index] = Math.clamp(score, 0, 10);
        }
        return ScoreTable.ofFitting(scorerNames, columns, scores, candidates.toArray(Candidate[]::new));
    }

    private static boolean spread(double[] column) {
        for (int i = 1; i < column.length; i++) {
            if (column[i] != column[0]) {
                return true;
            }
        }
        return false;
    }
}
