package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.WireNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The service's memory between requests, all of it derived data that any replica rebuilds from what it sees.
 * kube-scheduler asks filter then prioritize for each pod, the pods of one job share a shape, and the pods of a
 * few jobs come interleaved, so most nodes are judged once per burst instead of twice per pod:
 * <ul>
 * <li>each node's last assessments, per pod shape, while the node state is unchanged: by position in the
 *     cluster snapshot for NodeNames requests (one lookup finds the node and its memo), by name for Nodes;</li>
 * <li>one instance per pod shape, so that memos compare shapes by identity;</li>
 * <li>the cluster's top-tier headroom, counted once per snapshot;</li>
 * <li>the last pod read, for the prioritize call that follows its filter call.</li>
 * </ul>
 */
final class MemoizingCache implements RequestCache {

    private static final int MAX_MEMOS = 100_000;
    /** How many pod shapes each node remembers its assessment for. */
    private static final int SHAPES_PER_NODE = 4;
    private static final int MAX_SHAPES = 1_000;

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    /** Memos of the nodes of Nodes requests, by name. */
    private final ConcurrentHashMap<String, Memo> byName = new ConcurrentHashMap<>();
    /** One instance per distinct shape, so that a node's memo compares shapes by identity. */
    private final ConcurrentHashMap<Judging, Judging> shapes = new ConcurrentHashMap<>();
    private volatile PositionMemos byPosition = new PositionMemos(NodeSnapshot.EMPTY, new AtomicReferenceArray<>(0));
    private volatile Headroom headroom = new Headroom(NodeSnapshot.EMPTY, TopTierHeadroom.NONE);
    private volatile Parsed lastParsed = new Parsed(null, null);
    private volatile Filtered lastFiltered = new Filtered(NodeSnapshot.EMPTY, new int[0]);

    MemoizingCache(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
    }

    /**
     * A node's state, its assessment for one shape (none yet where {@code shape} is null), and (while the node is
     * unchanged) those for the shapes before it.
     *
     * @param facts the facts the state was built from, or null where it cannot be built again from them alone (no bind
     *              in flight ages it): while the cluster view hands out the same facts and the same bound pods, the state
     *              is this one again, and a 5,000-node request skips building each node's state (a few hash lookups
     *              and cache misses per node)
     * @param bound the node's bound pods the state was built from (compared by identity, as the facts are)
     */
    private record Memo(NodeFacts facts, List<BoundPod> bound, NodeState state, Judging shape, PlacementPolicy.Assessment assessment,
                        Memo older) {

        /** The state these facts and pods give, where this memo was made from the very same ones; else null. */
        NodeState stateOf(NodeFacts current, List<BoundPod> pods) {
            return facts != null && facts == current && bound == pods ? state : null;
        }

        /** This memo under a new key: its assessments kept where the state is the same, else none. */
        Memo rekeyed(NodeFacts newFacts, List<BoundPod> newBound, NodeState current) {
            if (state != current && !sameState(state, current)) {
                return new Memo(newFacts, newBound, current, null, null, null);
            }
            return new Memo(newFacts, newBound, current, shape, assessment, older);
        }

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
        Memo plus(NodeFacts from, List<BoundPod> pods, NodeState current, Judging newShape, PlacementPolicy.Assessment newAssessment) {
            if (state != current && !sameState(state, current)) {
                return new Memo(from, pods, current, newShape, newAssessment, null);
            }
            return new Memo(from, pods, current, newShape, newAssessment, keep(shape == null ? older : this, SHAPES_PER_NODE - 1));
        }

        private static Memo keep(Memo memo, int count) {
            return memo == null || count == 0 ? null
                    : new Memo(memo.facts, memo.bound, memo.state, memo.shape, memo.assessment, keep(memo.older, count - 1));
        }
    }

    /**
     * What a node's assessment depends on besides the node: the pod's shape, the tier a reserve closes to it, and the
     * version of the workload speed table it was judged by (0 for a pod naming no workload class): a learned table
     * that changes leaves the memos of the old one unmatched, so none is served stale.
     */
    private record Judging(PodRequest.Shape shape, ClosedTier closed, long throughputVersion) {
    }

    /** The top-tier headroom as last counted, and the snapshot it was counted from (null: from a request's nodes). */
    private record Headroom(NodeSnapshot snapshot, TopTierHeadroom headroom) {
    }

    /**
     * The memos of the nodes of one cluster snapshot, by position. Shared by every later snapshot with the same
     * positions; rebuilt, carrying each remaining node's memo over, when nodes come or go.
     */
    private record PositionMemos(NodeSnapshot snapshot, AtomicReferenceArray<Memo> memos) {
    }

    /** The snapshot positions of the nodes the last NodeNames filter kept, in the order it answered them. */
    private record Filtered(NodeSnapshot snapshot, int[] positions) {
    }

    /** The last pod read, by identity: the request reader hands out the same Pod for byte-identical JSON. */
    private record Parsed(Pod pod, PodRequest request) {
    }

    /**
     * Per resolved node: the facts and bound pods its memo is kept under (null facts when a bind in flight ages its
     * state, or for a Nodes request), its memo as found while resolving it, and its position in {@code byPosition}'s
     * snapshot (NodeNames only).
     */
    private record Found(NodeFacts[] facts, List<?>[] bound, Memo[] memos, int[] positions, PositionMemos byPosition,
                         NodeState[] resolved) implements Trace {
    }

    @Override
    public ResolvedNodes resolve(ExtenderArgs args) {
        return resolve(args, false);
    }

    @Override
    public ResolvedNodes resolveFiltered(ExtenderArgs args) {
        return resolve(args, true);
    }

    @Override
    public void filtered(ResolvedNodes nodes, int[] indexes, int count) {
        if (nodes.trace() instanceof Found found && found.positions() != null) {
            var positions = new int[count];
            for (int i = 0; i < count; i++) {
                positions[i] = found.positions()[indexes[i]];
            }
            lastFiltered = new Filtered(found.byPosition().snapshot(), positions);
        }
    }

    private ResolvedNodes resolve(ExtenderArgs args, boolean afterFilter) {
        return NodeResolution.resolve(args, cluster, new NodeResolution.States() {
            private NodeFacts[] facts;
            private List<?>[] bound;
            private Memo[] memos;
            private int[] positions;
            private PositionMemos snapshotMemos;
            private NodeState[] resolved;

            @Override
            public void begin(NodeSnapshot snapshot, int capacity) {
                facts = new NodeFacts[capacity];
                bound = new List<?>[capacity];
                memos = new Memo[capacity];
                resolved = new NodeState[capacity];
                if (snapshot != null) {
                    positions = new int[capacity];
                    snapshotMemos = memosOf(snapshot);
                }
            }

            @Override
            public int[] likelyPositions() {
                var filtered = lastFiltered;
                // Another pod's filter may have come in between: every position is checked against its name anyway.
                return afterFilter && filtered.snapshot().samePositions(snapshotMemos.snapshot()) ? filtered.positions() : null;
            }

            @Override
            public NodeState ofRequestNode(WireNode node, int index) {
                var name = node.facts().name();
                memos[index] = byName.get(name);
                // Facts read from a request are new objects every time: nothing to key a state on.
                return nodes.state(NoCache.withClusterSlices(node.facts(), cluster), cluster.boundPods(name));
            }

            @Override
            public NodeState ofClusterNode(NodeSnapshot snapshot, int position, int index) {
                var nodeFacts = snapshot.facts(position);
                var pods = snapshot.boundPods(position);
                var memo = snapshotMemos.memos().get(position);
                positions[index] = position;
                // Without a bind in flight, a node's state depends on its facts and bound pods alone: the same, the same state.
                var state = memo == null ? null : memo.stateOf(nodeFacts, pods);
                boolean timeless = true;
                if (state == null) {
                    state = nodes.state(nodeFacts, pods);
                    timeless = !NodeStateFactory.changesWithTime(pods);
                    if (timeless) {
                        // Kept at once, not only once assessed: a whole job's filter judges no node here, and asks again.
                        memo = memo == null ? new Memo(nodeFacts, pods, state, null, null, null) : memo.rekeyed(nodeFacts, pods, state);
                        snapshotMemos.memos().set(position, memo);
                    }
                }
                facts[index] = timeless ? nodeFacts : null;
                bound[index] = pods;
                memos[index] = memo;
                resolved[index] = state;
                return state;
            }

            @Override
            public Trace end(int kept) {
                return new Found(Arrays.copyOf(facts, kept), Arrays.copyOf(bound, kept), Arrays.copyOf(memos, kept),
                        positions == null ? null : Arrays.copyOf(positions, kept), snapshotMemos, Arrays.copyOf(resolved, kept));
            }
        });
    }

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
                    byName.remove(name);
                }
            }
            next = new PositionMemos(snapshot, memos);
        }
        byPosition = next;
        return next;
    }

    @Override
    public PodRequest parse(Pod pod) throws InvalidPodRequestException {
        var last = lastParsed;
        if (last.pod() == pod) {
            return last.request();
        }
        var request = parser.parse(pod);
        lastParsed = new Parsed(pod, request);
        return request;
    }

    @Override
    public PlacementPolicy.Assessment[] assess(PodRequest pod, ClosedTier closed, ResolvedNodes resolved) {
        var found = (Found) resolved.trace();
        var shape = canonical(new Judging(pod.shape(), closed, policy.throughputVersion(pod)));
        var states = resolved.states();
        var result = new PlacementPolicy.Assessment[states.length];
        List<NodeState> fresh = null;
        int[] freshAt = null;
        int freshCount = 0;
        for (int i = 0; i < states.length; i++) {
            var memo = found.memos()[i];
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
        if (found.positions() == null && byName.size() + fresh.size() > MAX_MEMOS) {
            byName.clear();
        }
        var judged = policy.assessAll(pod, fresh, closed);
        for (int j = 0; j < judged.size(); j++) {
            var state = fresh.get(j);
            var assessment = judged.get(j);
            int at = freshAt[j];
            var memo = found.memos()[at];
            result[at] = assessment;
            // A state the service changed after resolving it (GPUs a job's plan holds taken) is not what the facts alone give.
            var facts = state == found.resolved()[at] ? found.facts()[at] : null;
            @SuppressWarnings("unchecked")
            var pods = (List<BoundPod>) found.bound()[at];
            var next = memo == null ? new Memo(facts, pods, state, shape, assessment, null) : memo.plus(facts, pods, state, shape, assessment);
            if (found.positions() != null) {
                found.byPosition().memos().set(found.positions()[at], next);
            } else {
                byName.put(state.name(), next);
            }
        }
        return result;
    }

    @Override
    public TopTierHeadroom headroom(ResolvedNodes resolved) {
        if (cluster.knowsNodes()) {
            return clusterHeadroom();
        }
        var counted = TopTierHeadroom.of(Arrays.asList(resolved.states()));
        headroom = new Headroom(null, counted);
        return counted;
    }

    @Override
    public TopTierHeadroom clusterHeadroom() {
        var snapshot = cluster.nodes();
        var known = headroom;
        if (known.snapshot() != snapshot) {
            known = new Headroom(snapshot, TopTierHeadroom.of(NodeResolution.allStates(snapshot, nodes)));
            headroom = known;
        }
        return known.headroom();
    }

    @Override
    public TopTierHeadroom lastHeadroom() {
        return headroom.headroom();
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
}
