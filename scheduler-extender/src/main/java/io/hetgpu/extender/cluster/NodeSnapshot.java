package io.hetgpu.extender.cluster;

import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every node the cluster view knows, as of one moment: immutable, and array-indexed, so that a
 * 5,000-name {@code NodeNames} request costs one hash lookup per name and the rest is reading arrays.
 *
 * <p>A change gives a new snapshot. Changing a node's facts or bound pods copies the arrays (a few
 * microseconds at 5,000 nodes) and keeps the name index, and with it every node's position: callers
 * that keep derived data by position (see {@link #samePositions}) keep it across such changes. Adding
 * or removing a node builds a new index.
 */
public final class NodeSnapshot {

    public static final NodeSnapshot EMPTY = new NodeSnapshot(Map.of(), new NodeFacts[0], emptyPods(0));

    /** name -> position; shared, never modified, by every snapshot with the same nodes in the same positions. */
    private final Map<String, Integer> positions;
    private final NodeFacts[] facts;
    private final List<BoundPod>[] boundPods;

    private NodeSnapshot(Map<String, Integer> positions, NodeFacts[] facts, List<BoundPod>[] boundPods) {
        this.positions = positions;
        this.facts = facts;
        this.boundPods = boundPods;
    }

    /** A snapshot of the given nodes, in the given order, with the GPU pods bound to each. */
    public static NodeSnapshot of(List<NodeFacts> nodes, Map<String, List<BoundPod>> podsByNode) {
        var facts = new NodeFacts[nodes.size()];
        var pods = emptyPods(nodes.size());
        var positions = new HashMap<String, Integer>(nodes.size() * 2);
        for (var node : nodes) {
            if (positions.putIfAbsent(node.name(), positions.size()) != null) {
                throw new IllegalArgumentException("node " + node.name() + " given twice");
            }
            int at = positions.size() - 1;
            facts[at] = node;
            pods[at] = List.copyOf(podsByNode.getOrDefault(node.name(), List.of()));
        }
        return new NodeSnapshot(positions, facts, pods);
    }

    public int size() {
        return facts.length;
    }

    /** The node's position, or -1 when the snapshot does not hold it. */
    public int positionOf(String name) {
        var position = positions.get(name);
        return position == null ? -1 : position;
    }

    public NodeFacts facts(int position) {
        return facts[position];
    }

    /** The GPU pods bound to the node at the position (an immutable list). */
    public List<BoundPod> boundPods(int position) {
        return boundPods[position];
    }

    /** The facts of the named node, or null. */
    public NodeFacts facts(String name) {
        int at = positionOf(name);
        return at < 0 ? null : facts[at];
    }

    /** The GPU pods bound to the named node; empty when there are none or the node is unknown. */
    public List<BoundPod> boundPods(String name) {
        int at = positionOf(name);
        return at < 0 ? List.of() : boundPods[at];
    }

    /** Whether every node sits at the same position in both: data kept by position in one is valid in the other. */
    public boolean samePositions(NodeSnapshot other) {
        return positions == other.positions;
    }

    /** This snapshot with the node added, or its facts replaced (its bound pods stay). */
    public NodeSnapshot withNode(NodeFacts node) {
        int at = positionOf(node.name());
        if (at >= 0) {
            var newFacts = facts.clone();
            newFacts[at] = node;
            return new NodeSnapshot(positions, newFacts, boundPods);
        }
        var newPositions = new HashMap<>(positions);
        newPositions.put(node.name(), facts.length);
        var newFacts = Arrays.copyOf(facts, facts.length + 1);
        newFacts[facts.length] = node;
        var newPods = Arrays.copyOf(boundPods, boundPods.length + 1);
        newPods[boundPods.length] = List.of();
        return new NodeSnapshot(newPositions, newFacts, newPods);
    }

    /**
     * This snapshot with the node removed (unchanged when it holds no such node). The last node takes
     * the removed one's position, so one removal moves one node, not every node after it.
     */
    public NodeSnapshot withoutNode(String name) {
        int at = positionOf(name);
        if (at < 0) {
            return this;
        }
        int last = facts.length - 1;
        var newPositions = new HashMap<>(positions);
        newPositions.remove(name);
        var newFacts = Arrays.copyOf(facts, last);
        var newPods = Arrays.copyOf(boundPods, last);
        if (at != last) {
            newFacts[at] = facts[last];
            newPods[at] = boundPods[last];
            newPositions.put(facts[last].name(), at);
        }
        return new NodeSnapshot(newPositions, newFacts, newPods);
    }

    /** This snapshot with the node's bound GPU pods replaced (unchanged when it holds no such node). */
    public NodeSnapshot withBoundPods(String name, List<BoundPod> pods) {
        int at = positionOf(name);
        if (at < 0) {
            return this;
        }
        var newPods = boundPods.clone();
        newPods[at] = List.copyOf(pods);
        return new NodeSnapshot(positions, facts, newPods);
    }

    @SuppressWarnings("unchecked")
    private static List<BoundPod>[] emptyPods(int size) {
        return new List[size];
    }
}
