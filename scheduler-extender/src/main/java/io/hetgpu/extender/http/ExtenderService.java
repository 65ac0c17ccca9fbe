package io.hetgpu.extender.http;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.FilterOutcome;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * The extender verbs over decoded requests: resolves the request's nodes (from the request itself or
 * the cluster view), runs the policy and shapes the answer as kube-scheduler expects it. No HTTP here.
 */
public final class ExtenderService {

    static final String NULL_POD = "Pod is null: kube-scheduler sends the pod to place in every ExtenderArgs";
    static final String NO_NODES = "neither Nodes nor NodeNames given: nothing to filter";
    static final String NO_NODE_CACHE = "NodeNames given, but this extender runs without an API server (--kubeconfig none) "
            + "and knows no nodes: configure it in kube-scheduler with nodeCacheCapable: false, or give it a kubeconfig";
    static final String UNKNOWN_NODE = "node not in the extender's cache yet (informer still catching up)";

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
    private final ConcurrentHashMap<PodRequest.Shape, PodRequest.Shape> shapes = new ConcurrentHashMap<>();
    private static final int MAX_SHAPES = 1_000;

    /**
     * A node's assessment for one shape, and (while the node is unchanged) those for the shapes before it.
     *
     * @param facts the facts the state was built from when no GPU pod was bound to the node, else null: while
     *              the cluster view hands out the same facts and still no pod, the state is this one again, and
     *              a 5,000-node request skips the node-state cache (one hash lookup per node fewer)
     */
    private record Memo(NodeFacts facts, NodeState state, PodRequest.Shape shape, PlacementPolicy.Assessment assessment,
                        Memo older) {

        PlacementPolicy.Assessment find(NodeState current, PodRequest.Shape wanted) {
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
        Memo plus(NodeFacts from, NodeState current, PodRequest.Shape newShape, PlacementPolicy.Assessment newAssessment) {
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

    public ExtenderService(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                           BiConsumer<PodRequest, ScoreTable> onPrioritized) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
        this.onPrioritized = onPrioritized;
    }

    public ClusterView cluster() {
        return cluster;
    }

    public PodRequestParser parser() {
        return parser;
    }

    public NodeStateFactory nodeStates() {
        return nodes;
    }

    public PlacementPolicy policy() {
        return policy;
    }

    /**
     * The request's nodes as states; names the cluster view does not know are listed apart.
     *
     * @param facts per state, the cluster view's facts when no GPU pod is bound to the node (null otherwise
     *              or for a Nodes request), which its memo is kept under
     * @param memos per state, the node's memo as found while resolving it (null when none)
     */
    record Resolved(List<NodeState> states, List<NodeFacts> facts, List<Memo> memos, Map<String, WireNode> wire,
                    List<String> unknown, String error) {

        static Resolved error(String message) {
            return new Resolved(List.of(), List.of(), List.of(), Map.of(), List.of(), message);
        }
    }

    Resolved resolve(ExtenderArgs args) {
        if (args.nodes() != null) {
            var states = new ArrayList<NodeState>(args.nodes().size());
            var memos = new ArrayList<Memo>(args.nodes().size());
            var wire = new HashMap<String, WireNode>(args.nodes().size() * 2);
            for (var node : args.nodes()) {
                var facts = node.facts();
                states.add(nodes.state(facts, cluster.boundPods(facts.name())));
                memos.add(assessments.get(facts.name()));
                wire.put(facts.name(), node);
            }
            // Facts read from a request are new objects every time: nothing to key a state on.
            return new Resolved(states, Collections.nCopies(states.size(), null), memos, wire, List.of(), "");
        }
        if (args.nodeNames() == null) {
            return Resolved.error(NO_NODES);
        }
        if (!cluster.knowsNodes()) {
            return Resolved.error(NO_NODE_CACHE);
        }
        var states = new ArrayList<NodeState>(args.nodeNames().size());
        var keys = new ArrayList<NodeFacts>(args.nodeNames().size());
        var memos = new ArrayList<Memo>(args.nodeNames().size());
        var unknown = new ArrayList<String>();
        for (var name : args.nodeNames()) {
            var facts = cluster.node(name);
            if (facts == null) {
                unknown.add(name);
                continue;
            }
            var bound = cluster.boundPods(name);
            var memo = assessments.get(name);
            var key = bound.isEmpty() ? facts : null;
            // With no pod bound, a node's state depends on its facts alone: the same facts, the same state.
            states.add(key != null && memo != null && memo.facts() == key ? memo.state() : nodes.state(facts, bound));
            keys.add(key);
            memos.add(memo);
        }
        return new Resolved(states, keys, memos, Map.of(), unknown, "");
    }

    public FilterResult filter(ExtenderArgs args) {
        if (args.pod() == null) {
            return FilterResult.error(NULL_POD);
        }
        var resolved = resolve(args);
        if (!resolved.error().isEmpty()) {
            return FilterResult.error(resolved.error());
        }
        FilterOutcome outcome;
        try {
            outcome = policy.outcome(assess(parser.parse(args.pod()), resolved));
        } catch (InvalidPodRequestException e) {
            outcome = PlacementPolicy.refuseAll(resolved.states().stream().map(NodeState::name).toList(),
                    "pod " + podName(args) + " cannot be placed: " + e.getMessage());
        }
        var failed = outcome.failed();
        if (!resolved.unknown().isEmpty()) {
            var withUnknown = new LinkedHashMap<>(outcome.failed());
            resolved.unknown().forEach(name -> withUnknown.put(name, UNKNOWN_NODE));
            failed = withUnknown;
        }
        if (args.nodes() != null) {
            var kept = new ArrayList<WireNode>(outcome.fitting().size());
            outcome.fitting().forEach(name -> kept.add(resolved.wire().get(name)));
            return new FilterResult(kept, null, failed, outcome.unresolvable(), "");
        }
        return new FilterResult(null, outcome.fitting(), failed, outcome.unresolvable(), "");
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
            pod = parser.parse(args.pod());
        } catch (InvalidPodRequestException e) {
            // Filter has refused the pod everywhere; if asked anyway, no node is better than another.
            var zeros = new ArrayList<HostPriority>();
            resolved.states().forEach(state -> zeros.add(new HostPriority(state.name(), 0)));
            resolved.unknown().forEach(name -> zeros.add(new HostPriority(name, 0)));
            return new Priorities(zeros, "");
        }
        var table = policy.score(pod, assess(pod, resolved), cluster.contextOf(pod));
        var priorities = new ArrayList<HostPriority>(table.rows().size() + resolved.unknown().size());
        table.rows().forEach(row -> priorities.add(new HostPriority(row.node(), row.score())));
        resolved.unknown().forEach(name -> priorities.add(new HostPriority(name, 0)));
        onPrioritized.accept(pod, table);
        return new Priorities(priorities, "");
    }

    private List<PlacementPolicy.Assessment> assess(PodRequest pod, Resolved resolved) {
        var shape = canonical(pod.shape());
        var states = resolved.states();
        var result = new ArrayList<PlacementPolicy.Assessment>(states.size());
        var fresh = new ArrayList<NodeState>();
        var freshAt = new ArrayList<Integer>();
        for (int i = 0; i < states.size(); i++) {
            var state = states.get(i);
            var memo = resolved.memos().get(i);
            var known = memo == null ? null : memo.find(state, shape);
            if (known == null) {
                freshAt.add(result.size());
                fresh.add(state);
            }
            result.add(known);
        }
        if (!fresh.isEmpty()) {
            if (assessments.size() + fresh.size() > MAX_MEMOS) {
                assessments.clear();
            }
            var judged = policy.assessAll(pod, fresh);
            for (int i = 0; i < judged.size(); i++) {
                var state = fresh.get(i);
                var assessment = judged.get(i);
                int at = freshAt.get(i);
                var facts = resolved.facts().get(at);
                result.set(at, assessment);
                assessments.compute(state.name(), (name, memo) -> memo == null
                        ? new Memo(facts, state, shape, assessment, null) : memo.plus(facts, state, shape, assessment));
            }
        }
        return result;
    }

    private PodRequest.Shape canonical(PodRequest.Shape shape) {
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
