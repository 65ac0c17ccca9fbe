package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.ClusterGpus;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.RequestedPriorities;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;

/**
 * The filter and prioritize verbs over decoded requests, as their steps: resolve the request's nodes (from the
 * request itself or the cluster view), read the pod, have the policy judge each node, shape the answer as
 * kube-scheduler expects it. What is remembered between requests is the {@link RequestCache}'s. No HTTP here.
 */
public final class ExtenderService {

    public static final String NULL_POD = "Pod is null: kube-scheduler sends the pod to place in every ExtenderArgs";
    public static final String NO_NODES = "neither Nodes nor NodeNames given: nothing to filter";
    public static final String NO_NODE_CACHE = "NodeNames given, but this extender runs without an API server (--kubeconfig none) "
            + "and knows no nodes: configure it in kube-scheduler with nodeCacheCapable: false, or give it a kubeconfig";
    public static final String UNKNOWN_NODE = "node not in the extender's cache yet (informer still catching up)";
    public static final String UNNAMED_NODE = "node without a name (empty metadata.name or NodeNames entry): nothing to place a pod on";

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final PlacementPolicy policy;
    private final NodeStateFactory nodes;
    private final RequestCache cache;
    private final BiConsumer<PodRequest, ScoreTable> onPrioritized;
    private final CacheGate gate;
    private final WholeJobs jobs;
    /** Filter and prioritize calls in which the reserve kept the top tier from the pod. */
    private final LongAdder heldByReserve = new LongAdder();

    /** The service as the extender runs it: derived data kept between requests. */
    public ExtenderService(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                           BiConsumer<PodRequest, ScoreTable> onPrioritized) {
        this(cluster, parser, nodes, policy, onPrioritized, WholeJobs.off());
    }

    /** With {@code jobs} planning each job of several pods whole. */
    public ExtenderService(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                           BiConsumer<PodRequest, ScoreTable> onPrioritized, WholeJobs jobs) {
        this(cluster, parser, nodes, policy, new MemoizingCache(cluster, parser, nodes, policy), onPrioritized, jobs);
    }

    /** The service recomputing everything for every request: what the cached one must answer exactly like. */
    static ExtenderService uncached(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy) {
        return new ExtenderService(cluster, parser, nodes, policy, new NoCache(cluster, parser, nodes, policy), (pod, table) -> { },
                WholeJobs.off());
    }

    private ExtenderService(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy, RequestCache cache,
                            BiConsumer<PodRequest, ScoreTable> onPrioritized, WholeJobs jobs) {
        this.cluster = cluster;
        this.nodes = nodes;
        this.parser = parser;
        this.policy = policy;
        this.cache = cache;
        this.onPrioritized = onPrioritized;
        this.gate = new CacheGate(cluster);
        this.jobs = jobs;
    }

    /** Whole-job placement as the verbs share it (the bind verb steers by the same holds). */
    public WholeJobs jobs() {
        return jobs;
    }

    /** What every verb asks before it acts (the preempt and bind verbs share it): refusals until the caches have synced. */
    public CacheGate gate() {
        return gate;
    }

    /** The extended resource the pods' GPU requests name. */
    public String resourceName() {
        return parser.resourceName();
    }

    public FilterResult filter(ExtenderArgs args) {
        if (args.pod() == null) {
            return FilterResult.error(NULL_POD);
        }
        var waiting = gate.refusal("filter");
        if (waiting.isPresent()) {
            return FilterResult.error(waiting.get());
        }
        var nodes = cache.resolve(args);
        if (!nodes.error().isEmpty()) {
            return FilterResult.error(nodes.error());
        }
        var answer = new FilterAnswer(nodes);
        try {
            var pod = cache.parse(args.pod());
            jobs.sweep(this::closedTier);
            switch (jobs.judge(args.pod(), pod, held(nodes.states(), pod.uid()), this::closedTier)) {
                case WholeJobs.Alone alone -> {
                    var assessments = assess(pod, nodes);
                    answer.judged(assessments);
                    explainLoneFit(pod, assessments);
                }
                case WholeJobs.Steered steered -> answer.steered(steered.hold().node(), WholeJobs.steeredElsewhere(steered));
                case WholeJobs.Refused refused -> answer.refusedEverywhere("pod " + podName(args) + " cannot be placed: " + refused.reason());
            }
        } catch (InvalidPodRequestException e) {
            answer.refusedEverywhere("pod " + podName(args) + " cannot be placed: " + e.getMessage());
        }
        answer.keptInto(cache);
        return answer.result();
    }

    /**
     * kube-scheduler scores nothing when one node is left after the filters, so it never asks the prioritize verb, whose
     * scores explain a placement (the Event, the metrics): for a GPU pod the filter left one node, the filter explains it
     * then, from the scores over every node it judged, the refused ones with their reasons. That is most often an urgent
     * pod that refuses slower cards ({@code evictForFasterCards}), whose author most wants to know why.
     */
    private void explainLoneFit(PodRequest pod, PlacementPolicy.Assessment[] assessments) {
        if (!pod.needsGpus()) {
            return;
        }
        int fitting = 0;
        for (var assessment : assessments) {
            if (assessment instanceof PlacementPolicy.Fit) {
                fitting++;
            }
        }
        if (fitting == 1) {
            onPrioritized.accept(pod, policy.score(pod, Arrays.asList(assessments), cluster.contextOf(pod)));
        }
    }

    /** Scores, or an error message (kube-scheduler drops a failed prioritize call and goes on without it). */
    public record Priorities(List<HostPriority> priorities, String error) {
    }

    /**
     * @throws CacheGate.NotSynced before the caches have synced. kube-scheduler's answer to prioritize is a bare list with no
     *         Error, and it reads any failed call (an HTTP error) as "no scores from this extender" and goes on with its own:
     *         its attempt fails on the filter's Error, asked first, not here. Scores of 0 would read the same to it, but an
     *         error says why in its log (and to anyone with curl) instead of passing for a judgement.
     */
    public Priorities prioritize(ExtenderArgs args) {
        if (args.pod() == null) {
            return new Priorities(List.of(), NULL_POD);
        }
        gate.check("prioritize");
        var nodes = cache.resolveFiltered(args);
        if (!nodes.error().isEmpty()) {
            return new Priorities(List.of(), nodes.error());
        }
        var priorities = new Scores(nodes);
        PodRequest pod;
        try {
            pod = cache.parse(args.pod());
        } catch (InvalidPodRequestException e) {
            // Filter has refused the pod everywhere; if asked anyway, no node is better than another.
            for (int i = 0; i < nodes.size(); i++) {
                priorities.score(i, 0);
            }
            return new Priorities(priorities.withUnjudged(), "");
        }
        var hold = jobs.holdOf(pod.uid());
        if (hold != null) {
            // Steered by its job's plan: the filter kept only the seat's node.
            for (int i = 0; i < nodes.size(); i++) {
                priorities.score(i, nodes.states()[i].name().equals(hold.node()) ? 10 : 0);
            }
            return new Priorities(priorities.withUnjudged(), "");
        }
        var table = policy.score(pod, Arrays.asList(assess(pod, nodes)), cluster.contextOf(pod));
        // One row per resolved node, in their order.
        for (int i = 0; i < table.size(); i++) {
            priorities.score(i, table.score(i));
        }
        onPrioritized.accept(pod, table);
        return new Priorities(priorities.withUnjudged(), "");
    }

    /**
     * Prioritize's answer as it fills: each resolved node's score, its host written as the request named it (as the
     * request's bytes where it came as bytes), then 0 for each name asked about but not judged.
     */
    private static final class Scores {
        private final ResolvedNodes nodes;
        private final RequestedPriorities asked;
        private final List<HostPriority> named;

        Scores(ResolvedNodes nodes) {
            this.nodes = nodes;
            int capacity = nodes.size() + nodes.unknown().size() + 1;
            this.asked = nodes.asked() == null ? null : new RequestedPriorities(nodes.asked(), capacity);
            this.named = nodes.asked() == null ? new ArrayList<>(capacity) : null;
        }

        /** The score of the resolved node at {@code i}. */
        void score(int i, int score) {
            if (asked != null) {
                asked.add(nodes.indexes()[i], score);
            } else {
                named.add(new HostPriority(nodes.states()[i].name(), score));
            }
        }

        /** The answer, with 0 for each name asked about but not judged: unknown to the cluster view, or empty. */
        List<HostPriority> withUnjudged() {
            for (var name : nodes.unknown()) {
                add(name);
            }
            if (nodes.unnamed()) {
                add("");
            }
            return asked != null ? asked : named;
        }

        private void add(String name) {
            if (asked != null) {
                asked.add(name, 0);
            } else {
                named.add(new HostPriority(name, 0));
            }
        }
    }

    /**
     * The states with the GPUs that job plans hold for other pods taken (in place: the array is the request's own). A
     * plan's seats are taken for every pod but the one seated there.
     */
    private NodeState[] held(NodeState[] states, String uid) {
        if (jobs.holds().any()) {
            for (int i = 0; i < states.length; i++) {
                states[i] = states[i].withTaken(jobs.holds().heldOn(states[i].name(), uid));
            }
        }
        return states;
    }

    private PlacementPolicy.Assessment[] assess(PodRequest pod, ResolvedNodes nodes) {
        held(nodes.states(), pod.uid());
        // Without informers the extender sees no waiting pods, so nothing is held for room.
        var room = cluster.knowsNodes() ? PolicyStep.heldForRoom(policy, pod, () -> clusterGpus(pod)) : ClosedTier.NONE;
        if (room != ClosedTier.NONE) {
            jobs.countHeldForRoom();
            return cache.assess(pod, room, nodes);
        }
        var reserved = PolicyStep.closedTier(policy, pod, () -> cache.headroom(nodes));
        if (reserved != ClosedTier.NONE) {
            heldByReserve.increment();
            return cache.assess(pod, reserved, nodes);
        }
        // Without node informers the extender cannot see what preemption could free.
        return cache.assess(pod, cluster.knowsNodes() ? PolicyStep.evictionFloor(policy, pod, this::reachableBy) : ClosedTier.NONE, nodes);
    }

    /** The top tier's free GPUs as last counted for a reserve (NONE before the first count, or without a reserve). */
    public TopTierHeadroom lastHeadroom() {
        return cache.lastHeadroom();
    }

    /** Free GPUs of each card model in the cluster view now (none before the node informer knows the nodes). */
    public java.util.Map<String, Integer> freeGpusByModel() {
        return cluster.knowsNodes() ? io.hetgpu.extender.policy.FreeGpusByModel.of(NodeResolution.allStates(cluster.nodes(), nodes))
                : java.util.Map.of();
    }

    /** How many filter and prioritize calls the reserve has kept top-tier cards from a pod. */
    public long heldByReserve() {
        return heldByReserve.sum();
    }

    /**
     * The tiers closed to the pod now, as the filter closes them (for the preempt and bind verbs, which judge one node
     * with the cluster view): so that preemption frees only cards the filter then lets the pod take.
     */
    public ClosedTier closedTier(PodRequest pod) {
        return cluster.knowsNodes() ? PolicyStep.closedTier(policy, pod, () -> clusterGpus(pod), cache::clusterHeadroom, this::reachableBy)
                : ClosedTier.NONE;
    }

    /**
     * Every GPU of the cluster view and those free, the GPUs job plans hold for pods other than this one taken, and the
     * smaller work waiting.
     */
    private ClusterGpus clusterGpus(PodRequest pod) {
        int smallerWaiting = cluster.waitingGpusBelow(pod.gpuCount());
        if (smallerWaiting == 0) {
            // No smaller pod waits: the room keeps nothing from this pod, and the nodes need not be counted.
            return new ClusterGpus(0, 0, 0);
        }
        var states = NodeResolution.allStates(cluster.nodes(), nodes);
        return ClusterGpus.of(Arrays.asList(held(states.toArray(NodeState[]::new), pod.uid()))).withSmallerWaiting(smallerWaiting);
    }

    /**
     * Every known node that takes new pods as it would be with the GPUs of every pod below {@code priority} free where no
     * PodDisruptionBudget forbids it: what preemption could free, as the eviction floor weighs it (the simulator's
     * {@code ClusterState.reachableBy} is held equal to it where no budget applies).
     */
    public List<NodeState> reachableBy(int priority) {
        return NodeResolution.reachableBy(cluster.nodes(), nodes, priority, cluster);
    }

    static String podName(ExtenderArgs args) {
        var metadata = args.pod().getMetadata();
        return metadata == null ? "(unnamed)" : metadata.getNamespace() + "/" + metadata.getName();
    }
}
