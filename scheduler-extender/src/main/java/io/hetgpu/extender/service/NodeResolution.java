package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.RequestedNames;
import io.hetgpu.extender.wire.WireNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

/**
 * Which of a request's nodes are judged, the same for every {@link RequestCache}: each name once (kube-scheduler
 * takes the returned NodeNames as the filtered set and adds up the scores per host, so a name answered twice
 * would be a node kept twice or scored twice); in a Nodes request the first object of a name is the one
 * judged and handed back. Nodes come from one API server and never share a name: this only keeps a hand-made
 * or broken request from getting an inconsistent answer. How a node becomes a state is the cache's.
 */
final class NodeResolution {

    /** A cache's way to a node's state, told each node resolved in turn. */
    interface States {
        /** Before the first node: the cluster snapshot of a NodeNames request (null for Nodes), and at most how many come. */
        void begin(NodeSnapshot snapshot, int capacity);

        /**
         * After {@link #begin}, for a NodeNames request: per name, the snapshot position its node most likely has (each
         * one checked against the name before it is taken), or null for none expected.
         */
        default int[] likelyPositions() {
            return null;
        }

        NodeState ofRequestNode(WireNode node, int index);

        NodeState ofClusterNode(NodeSnapshot snapshot, int position, int index);

        /** After the last node: what the cache keeps of the {@code kept} nodes until they are assessed. */
        RequestCache.Trace end(int kept);
    }

    private NodeResolution() {
    }

    static ResolvedNodes resolve(ExtenderArgs args, ClusterView cluster, States lookup) {
        if (args.nodes() != null) {
            return requestNodes(args.nodes(), lookup);
        }
        if (args.nodeNames() == null) {
            return ResolvedNodes.error(ExtenderService.NO_NODES);
        }
        if (!cluster.knowsNodes()) {
            return ResolvedNodes.error(ExtenderService.NO_NODE_CACHE);
        }
        return clusterNodes(args.nodeNames(), cluster.nodes(), lookup);
    }

    /** Every node of the cluster view's snapshot as a state, in snapshot order (for the top-tier headroom). */
    static List<NodeState> allStates(NodeSnapshot snapshot, NodeStateFactory nodes) {
        var states = new ArrayList<NodeState>(snapshot.size());
        for (int i = 0; i < snapshot.size(); i++) {
            states.add(nodes.state(snapshot.facts(i), snapshot.boundPods(i)));
        }
        return states;
    }

    /**
     * Every node of the snapshot that takes new pods, with the GPUs of its pods below {@code priority} counted free (the
     * devices each holds read from its bind record, else predicted) unless evicting them would break a
     * PodDisruptionBudget: what preemption could free for a pod of that priority without breaking one. A cordoned or
     * tainted node is left out: kube-scheduler would not place the pod there after an eviction. A pod a budget guards
     * stays counted as held, so the floor never sends an urgent pod to guarded pods' cards while unguarded ones on other
     * cards would do (kube-scheduler's preemption breaks the fewest budgets first).
     */
    static List<NodeState> reachableBy(NodeSnapshot snapshot, NodeStateFactory nodes, int priority, ClusterView cluster) {
        var states = new ArrayList<NodeState>(snapshot.size());
        for (int i = 0; i < snapshot.size(); i++) {
            if (!snapshot.facts(i).takesNewPods()) {
                continue;
            }
            var bound = snapshot.boundPods(i);
            var state = nodes.state(snapshot.facts(i), bound);
            var evictable = cluster.evictableBelow(bound, priority);
            states.add(state.withFreed(evictable.isEmpty() ? 0 : DeviceHoldings.heldBy(state.gpus(), bound, pod -> evictable.contains(pod.uid()))));
        }
        return states;
    }

    private static ResolvedNodes requestNodes(List<WireNode> nodes, States lookup) {
        lookup.begin(null, nodes.size());
        var states = new NodeState[nodes.size()];
        var wire = new ArrayList<WireNode>(nodes.size());
        var seen = new HashSet<String>(nodes.size() * 2);
        boolean unnamed = false;
        for (var node : nodes) {
            var name = node.facts().name();
            if (name.isEmpty()) {
                unnamed = true;
            } else if (seen.add(name)) {
                states[wire.size()] = lookup.ofRequestNode(node, wire.size());
                wire.add(node);
            }
        }
        int kept = wire.size();
        return new ResolvedNodes(kept == states.length ? states : Arrays.copyOf(states, kept), wire, List.of(), unnamed, "",
                lookup.end(kept));
    }

    private static ResolvedNodes clusterNodes(List<String> names, NodeSnapshot snapshot, States lookup) {
        lookup.begin(snapshot, names.size());
        var states = new NodeState[names.size()];
        var asked = names instanceof RequestedNames bytes ? bytes : null;
        var indexes = asked == null ? null : new int[names.size()];
        var unknown = new ArrayList<String>();
        HashSet<String> unknownSeen = null;
        // One bit per snapshot position, in plain longs: a BitSet's bounds checks and growth showed in the profile at 5,000
        // names, and a flag per position cleared 15 KB (a third of the first-level cache) for a 100-name request.
        var seen = new long[(snapshot.size() + 63) >>> 6];
        var likely = lookup.likelyPositions();
        boolean unnamed = false;
        int known = 0;
        for (int i = 0; i < names.size(); i++) {
            int position;
            String name = null;
            if (asked != null && asked.plain(i)) {
                // A name as its bytes: no String for the thousands the snapshot knows.
                if (asked.start(i) == asked.end(i)) {
                    unnamed = true;
                    continue;
                }
                int guess = likely != null && i < likely.length ? likely[i] : -1;
                position = snapshot.isNamed(guess, asked.body(), asked.start(i), asked.end(i)) ? guess
                        : snapshot.positionOf(asked.body(), asked.start(i), asked.end(i));
            } else {
                name = names.get(i);
                if (name.isEmpty()) {
                    unnamed = true;
                    continue;
                }
                position = snapshot.positionOf(name);
            }
            if (position < 0) {
                name = name != null ? name : names.get(i);
                if (unknownSeen == null) {
                    unknownSeen = new HashSet<>();
                }
                if (unknownSeen.add(name)) {
                    unknown.add(name);
                }
            } else if ((seen[position >>> 6] & 1L << position) == 0) {
                seen[position >>> 6] |= 1L << position;
                states[known] = lookup.ofClusterNode(snapshot, position, known);
                if (indexes != null) {
                    indexes[known] = i;
                }
                known++;
            }
        }
        return new ResolvedNodes(known == states.length ? states : Arrays.copyOf(states, known), null, unknown, unnamed, "",
                lookup.end(known), asked, indexes);
    }
}
