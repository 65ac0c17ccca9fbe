package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.NodeReasons;
import io.hetgpu.extender.wire.WireNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiConsumer;

/**
 * The filter and prioritize verbs over decoded requests: resolves the request's nodes (from the request itself
 * or the cluster view), runs the policy and shapes the answer as kube-scheduler expects it. No HTTP here.
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
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    private final BiConsumer<PodRequest, ScoreTable> onPrioritized;
    /**
     * The last assessments per node, reused while the node state and the pod's shape are unchanged:
     * kube-scheduler asks filter then prioritize for each pod, the pods of one job share a shape, and
     * the pods of a few jobs come interleaved, so most nodes are judged once per burst instead of twice
     * per pod. Derived data only.
     */
    private final ConcurrentHashMap<String, Memo> assessments = new ConcurrentHashMap<>();
    private static final int MAX_MEMOS = 100_000;
    /** How many pod shapes each node remembers its assessment for. */
    private static final int SHAPES_PER_NODE = 4;
    /** One instance per distinct shape, so that a node's memo compares shapes by identity. */
    private final ConcurrentHashMap<Judging, Judging> shapes = new ConcurrentHashMap<>();
    private static final int MAX_SHAPES = 1_000;

    /**
     * A node's assessment for one shape, and (while the node is unchanged) those for the shapes before it.
     *
     * @param facts the facts the state was built from when no GPU pod was bound to the node, else null: while
     *              the cluster view hands out the same facts and still no pod, the state is this one again, and
     *              a 5,000-node request skips the node-state cache (one hash lookup per node fewer)
     */
    private record Memo(NodeFacts facts, NodeState state, Judging shape, PlacementPolicy.Assessment assessment,
                        Memo older) {

        PlacementPolicy.Assessment find(NodeState current, Judging wanted) {
            if (state != current && !sameState(state, current)) {
                return null;
            }
            for (var memo = this; memo != null; memo = memo.older) {
                if (memo.shape == wanted) {
                    return memo.assessment;
                }
            }
            return null;
        }

        /** This memo with another shape's assessment in front; the oldest beyond the limit dropped. */
        Memo plus(NodeFacts from, NodeState current, Judging newShape, PlacementPolicy.Assessment newAssessment) {
            if (state != current && !sameState(state, current)) {
                return new Memo(from, current, newShape, newAssessment, null);
            }
            return new Memo(from, current, newShape, newAssessment, keep(this, SHAPES_PER_NODE - 1));
        }

        private static Memo keep(Memo memo, int count) {
            return memo == null || count == 0 ? null
                    : new Memo(memo.facts, memo.state, memo.shape, memo.assessment, keep(memo.older, count - 1));
        }
    }

    /**
     * What a node's assessment depends on besides the node: the pod's shape, and the tier a high-priority
     * reserve closes to it at the moment.
     */
    private record Judging(PodRequest.Shape shape, ClosedTier closed) {
    }

    /**
     * The cluster's top-tier headroom as last counted, and the snapshot it was counted from (null when it was
     * counted from a request's nodes): counted once per snapshot, and only with a reserve.
     */
    private record Headroom(NodeSnapshot snapshot, TopTierHeadroom headroom) {
    }

    private volatile Headroom headroom = new Headroom(NodeSnapshot.EMPTY, TopTierHeadroom.NONE);
    /** Filter and prioritize calls in which the reserve kept the top tier from the pod. */
    private final java.util.concurrent.atomic.LongAdder heldByReserve = new java.util.concurrent.atomic.LongAdder();

    public ExtenderService(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                           BiConsumer<PodRequest, ScoreTable> onPrioritized) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
        this.onPrioritized = onPrioritized;
    }

    /** Whether the cluster view has caught up with the API server (the extender is ready for kube-scheduler). */
    public boolean ready() {
        return cluster.synced();
    }

    /** The extended resource the pods' GPU requests name. */
    public String resourceName() {
        return parser.resourceName();
    }

    /**
     * The request's nodes as states; names the cluster view does not know are listed apart.
     *
     * @param facts     per state, the cluster view's facts when no GPU pod is bound to the node (null otherwise
     *                  or for a Nodes request), which its memo is kept under
     * @param memos     per state, the node's memo as found while resolving it (null when none)
     * @param positions per state, its position in {@code byPosition}'s snapshot (NodeNames), else null
     * @param byPosition the memos of a NodeNames request's snapshot, else null
     * @param wire      per state, the request's node (Nodes), else null
     */
    /**
     * @param unknown names the cluster view does not know, each once
     * @param unnamed whether the request named a node "" (or sent one without a name)
     */
    record Resolved(NodeState[] states, NodeFacts[] facts, Memo[] memos, int[] positions, PositionMemos byPosition,
                    List<WireNode> wire, List<String> unknown, boolean unnamed, String error) {

        static Resolved error(String message) {
            return new Resolved(new NodeState[0], new NodeFacts[0], new Memo[0], null, null, null, List.of(), false, message);
        }

        int size() {
            return states.length;
        }
    }

    /**
     * The memos of the nodes of one cluster snapshot, by position: a NodeNames request finds each node's
     * memo with the one lookup that finds the node. Shared by every later snapshot with the same positions;
     * rebuilt, carrying each remaining node's memo over, when nodes come or go.
     */
    private record PositionMemos(NodeSnapshot snapshot, AtomicReferenceArray<Memo> memos) {
    }

    private volatile PositionMemos byPosition = new PositionMemos(NodeSnapshot.EMPTY, new AtomicReferenceArray<>(0));

    private PositionMemos memosOf(NodeSnapshot snapshot) {
        var current = byPosition;
        if (current.snapshot() == snapshot) {
            return current;
        }
        PositionMemos next;
        if (snapshot.samePositions(current.snapshot())) {
            next = new PositionMemos(snapshot, current.memos());
        } else {
            var memos = new AtomicReferenceArray<Memo>(snapshot.size());
            var before = current.snapshot();
            for (int i = 0; i < snapshot.size(); i++) {
                int was = before.positionOf(snapshot.facts(i).name());
                if (was >= 0) {
                    memos.set(i, current.memos().get(was));
                }
            }
            for (int i = 0; i < before.size(); i++) {
                var name = before.facts(i).name();
                if (snapshot.positionOf(name) < 0) {
                    // Gone from the cluster: what was derived from it goes too.
                    nodes.forget(name);
                    assessments.remove(name);
                }
            }
            next = new PositionMemos(snapshot, memos);
        }
        byPosition = next;
        return next;
    }

    /**
     * The request's nodes, each name once: a name given again is the node already answered for (kube-scheduler
     * takes the returned NodeNames as the filtered set and adds up the scores per host, so a name answered twice
     * would be a node kept twice or scored twice). In a Nodes request the first object of a name is the one
     * judged and handed back. Nodes come from one API server and never share a name: this only keeps a hand-made
     * or broken request from getting an inconsistent answer.
     */
    Resolved resolve(ExtenderArgs args) {
        if (args.nodes() != null) {
            int size = args.nodes().size();
            var states = new NodeState[size];
            var memos = new Memo[size];
            var wire = new ArrayList<WireNode>(size);
            var seen = new HashSet<String>(size * 2);
            boolean unnamed = false;
            for (var node : args.nodes()) {
                var facts = node.facts();
                if (facts.name().isEmpty()) {
                    unnamed = true;
                    continue;
                }
                if (!seen.add(facts.name())) {
                    continue;
                }
                states[wire.size()] = nodes.state(facts, cluster.boundPods(facts.name()));
                memos[wire.size()] = assessments.get(facts.name());
                wire.add(node);
            }
            int kept = wire.size();
            // Facts read from a request are new objects every time: nothing to key a state on.
            return new Resolved(kept == size ? states : Arrays.copyOf(states, kept), new NodeFacts[kept],
                    kept == size ? memos : Arrays.copyOf(memos, kept), null, null, wire, List.of(), unnamed, "");
        }
        if (args.nodeNames() == null) {
            return Resolved.error(NO_NODES);
        }
        if (!cluster.knowsNodes()) {
            return Resolved.error(NO_NODE_CACHE);
        }
        var snapshot = cluster.nodes();
        var byPositions = memosOf(snapshot);
        var names = args.nodeNames();
        var states = new NodeState[names.size()];
        var keys = new NodeFacts[names.size()];
        var memos = new Memo[names.size()];
        var positions = new int[names.size()];
        var unknown = new ArrayList<String>();
        HashSet<String> unknownSeen = null;
        var seen = new BitSet(snapshot.size());
        boolean unnamed = false;
        int known = 0;
        for (var name : names) {
            if (name.isEmpty()) {
                unnamed = true;
                continue;
            }
            int position = snapshot.positionOf(name);
            if (position < 0) {
                if (unknownSeen == null) {
                    unknownSeen = new HashSet<>();
                }
                if (unknownSeen.add(name)) {
                    unknown.add(name);
                }
                continue;
            }
            if (seen.get(position)) {
                continue;
            }
            seen.set(position);
            var facts = snapshot.facts(position);
            var bound = snapshot.boundPods(position);
            var memo = byPositions.memos().get(position);
            var key = bound.isEmpty() ? facts : null;
            // With no pod bound, a node's state depends on its facts alone: the same facts, the same state.
            states[known] = key != null && memo != null && memo.facts() == key ? memo.state() : nodes.state(facts, bound);
            keys[known] = key;
            memos[known] = memo;
            positions[known] = position;
            known++;
        }
        if (known < names.size()) {
            states = Arrays.copyOf(states, known);
            keys = Arrays.copyOf(keys, known);
            memos = Arrays.copyOf(memos, known);
            positions = Arrays.copyOf(positions, known);
        }
        return new Resolved(states, keys, memos, positions, byPositions, null, unknown, unnamed, "");
    }

    public FilterResult filter(ExtenderArgs args) {
        if (args.pod() == null) {
            return FilterResult.error(NULL_POD);
        }
        var resolved = resolve(args);
        if (!resolved.error().isEmpty()) {
            return FilterResult.error(resolved.error());
        }
        var fitting = new ArrayList<String>(resolved.size());
        var kept = args.nodes() == null ? null : new ArrayList<WireNode>(resolved.size());
        var failed = new Refusals(resolved);
        var unresolvable = new Refusals(resolved);
        try {
            var judged = assess(parse(args.pod()), resolved);
            // The answer straight from the assessments: kube-scheduler's three lists, in request order.
            for (int i = 0; i < judged.length; i++) {
                switch (judged[i]) {
                    case PlacementPolicy.Fit fit -> {
                        if (kept != null) {
                            kept.add(resolved.wire().get(i));
                        } else {
                            fitting.add(fit.candidate().name());
                        }
                    }
                    case PlacementPolicy.Misfit misfit -> (misfit.rejection().unresolvable() ? unresolvable : failed)
                            .add(i, misfit.node(), misfit.rejection().reason());
                }
            }
        } catch (InvalidPodRequestException e) {
            var reason = "pod " + podName(args) + " cannot be placed: " + e.getMessage();
            for (int i = 0; i < resolved.size(); i++) {
                unresolvable.add(i, resolved.states()[i].name(), reason);
            }
        }
        for (var name : resolved.unknown()) {
            failed.addUnknown(name, UNKNOWN_NODE);
        }
        if (resolved.unnamed()) {
            unresolvable.addUnknown("", UNNAMED_NODE);
        }
        return kept != null
                ? new FilterResult(kept, null, failed.map(), unresolvable.map(), "")
                : new FilterResult(null, fitting, failed.map(), unresolvable.map(), "");
    }

    /**
     * One of the filter answer's reason maps as it fills, in request order, each node once (the resolved
     * nodes are distinct). A NodeNames request's thousands of entries go into two arrays.
     */
    private static final class Refusals {
        private final NodeReasons.Builder byPosition;
        private final LinkedHashMap<String, String> byName;

        Refusals(Resolved resolved) {
            byPosition = resolved.positions() == null ? null : NodeReasons.builder(resolved.size());
            byName = resolved.positions() == null ? new LinkedHashMap<>() : null;
        }

        /** The node at {@code index} of the resolved states. */
        void add(int index, String node, String reason) {
            if (byName != null) {
                byName.put(node, reason);
            } else {
                byPosition.put(node, reason);
            }
        }

        /** A name the resolved states do not hold (each once). */
        void addUnknown(String node, String reason) {
            if (byName != null) {
                byName.put(node, reason);
            } else {
                byPosition.put(node, reason);
            }
        }

        Map<String, String> map() {
            return byName != null ? byName : byPosition.build();
        }
    }

    /** Scores, or an error message (kube-scheduler drops a failed prioritize call and goes on without it). */
    public record Priorities(List<HostPriority> priorities, String error) {
    }

    public Priorities prioritize(ExtenderArgs args) {
        if (args.pod() == null) {
            return new Priorities(List.of(), NULL_POD);
        }
        var resolved = resolve(args);
        if (!resolved.error().isEmpty()) {
            return new Priorities(List.of(), resolved.error());
        }
        PodRequest pod;
        try {
            pod = parse(args.pod());
        } catch (InvalidPodRequestException e) {
            // Filter has refused the pod everywhere; if asked anyway, no node is better than another.
            var zeros = new ArrayList<HostPriority>();
            for (var state : resolved.states()) {
                zeros.add(new HostPriority(state.name(), 0));
            }
            zeros.addAll(unjudged(resolved));
            return new Priorities(zeros, "");
        }
        var table = policy.score(pod, Arrays.asList(assess(pod, resolved)), cluster.contextOf(pod));
        var priorities = new ArrayList<HostPriority>(table.rows().size() + resolved.unknown().size() + 1);
        table.rows().forEach(row -> priorities.add(new HostPriority(row.node(), row.score())));
        priorities.addAll(unjudged(resolved));
        onPrioritized.accept(pod, table);
        return new Priorities(priorities, "");
    }

    /** Score 0 for each name that was asked about but not judged: unknown to the cluster view, or empty. */
    private static List<HostPriority> unjudged(Resolved resolved) {
        var zeros = new ArrayList<HostPriority>(resolved.unknown().size() + 1);
        resolved.unknown().forEach(name -> zeros.add(new HostPriority(name, 0)));
        if (resolved.unnamed()) {
            zeros.add(new HostPriority("", 0));
        }
        return zeros;
    }

    private PlacementPolicy.Assessment[] assess(PodRequest pod, Resolved resolved) {
        var closed = policy.reservesTopTier() ? policy.closedTier(pod, headroom(resolved)) : ClosedTier.NONE;
        if (closed != ClosedTier.NONE) {
            heldByReserve.increment();
        }
        var shape = canonical(new Judging(pod.shape(), closed));
        var states = resolved.states();
        var result = new PlacementPolicy.Assessment[states.length];
        List<NodeState> fresh = null;
        int[] freshAt = null;
        int freshCount = 0;
        for (int i = 0; i < states.length; i++) {
            var memo = resolved.memos()[i];
            var known = memo == null ? null : memo.find(states[i], shape);
            if (known == null) {
                if (fresh == null) {
                    fresh = new ArrayList<>();
                    freshAt = new int[states.length];
                }
                freshAt[freshCount++] = i;
                fresh.add(states[i]);
            }
            result[i] = known;
        }
        if (fresh == null) {
            return result;
        }
        if (resolved.positions() == null && assessments.size() + fresh.size() > MAX_MEMOS) {
            assessments.clear();
        }
        var judged = policy.assessAll(pod, fresh, closed);
        for (int j = 0; j < judged.size(); j++) {
            var state = fresh.get(j);
            var assessment = judged.get(j);
            int at = freshAt[j];
            var facts = resolved.facts()[at];
            var memo = resolved.memos()[at];
            result[at] = assessment;
            var next = memo == null ? new Memo(facts, state, shape, assessment, null) : memo.plus(facts, state, shape, assessment);
            if (resolved.positions() != null) {
                resolved.byPosition().memos().set(resolved.positions()[at], next);
            } else {
                assessments.put(state.name(), next);
            }
        }
        return result;
    }

    /** The last pod read, by identity: the request reader hands out the same Pod for byte-identical JSON. */
    private record Parsed(Pod pod, PodRequest request) {
    }

    private volatile Parsed lastParsed = new Parsed(null, null);

    /** The pod's request, read once for filter and prioritize of the same pod (callers do not modify a Pod they handed in). */
    private PodRequest parse(Pod pod) throws InvalidPodRequestException {
        var last = lastParsed;
        if (last.pod() == pod) {
            return last.request();
        }
        var request = parser.parse(pod);
        lastParsed = new Parsed(pod, request);
        return request;
    }

    /**
     * The top tier's free GPUs across the whole cluster where the cluster view knows it, else across the
     * request's nodes (without an API server; kube-scheduler may have filtered some out, so the count can
     * be low and the reserve then holds back more than it must).
     */
    private TopTierHeadroom headroom(Resolved resolved) {
        if (cluster.knowsNodes()) {
            return clusterHeadroom();
        }
        var counted = TopTierHeadroom.of(Arrays.asList(resolved.states()));
        headroom = new Headroom(null, counted);
        return counted;
    }

    private TopTierHeadroom clusterHeadroom() {
        var snapshot = cluster.nodes();
        var known = headroom;
        if (known.snapshot() != snapshot) {
            var states = new ArrayList<NodeState>(snapshot.size());
            for (int i = 0; i < snapshot.size(); i++) {
                states.add(nodes.state(snapshot.facts(i), snapshot.boundPods(i)));
            }
            known = new Headroom(snapshot, TopTierHeadroom.of(states));
            headroom = known;
        }
        return known.headroom();
    }

    /** The top tier's free GPUs as last counted for a reserve (NONE before the first count, or without a reserve). */
    public TopTierHeadroom lastHeadroom() {
        return headroom.headroom();
    }

    /** How many filter and prioritize calls the reserve has kept top-tier cards from a pod. */
    public long heldByReserve() {
        return heldByReserve.sum();
    }

    /** The tier a reserve closes to the pod now (for preemption, which judges one node with the cluster view). */
    public ClosedTier closedTier(PodRequest pod) {
        return policy.reservesTopTier() && cluster.knowsNodes() ? policy.closedTier(pod, clusterHeadroom()) : ClosedTier.NONE;
    }

    private Judging canonical(Judging shape) {
        var known = shapes.get(shape);
        if (known != null) {
            return known;
        }
        if (shapes.size() >= MAX_SHAPES) {
            // Memos of forgotten shapes simply stop matching and age out.
            shapes.clear();
        }
        known = shapes.putIfAbsent(shape, shape);
        return known == null ? shape : known;
    }

    /** Same node state for the policy: the same decoded inventory (by identity), free devices and place. */
    private static boolean sameState(NodeState a, NodeState b) {
        return a.gpus() == b.gpus() && a.freeMask() == b.freeMask() && a.rack().equals(b.rack()) && a.zone().equals(b.zone());
    }

    static String podName(ExtenderArgs args) {
        var metadata = args.pod().getMetadata();
        return metadata == null ? "(unnamed)" : metadata.getNamespace() + "/" + metadata.getName();
    }
}
