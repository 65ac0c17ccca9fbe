package io.hetgpu.extender.cluster;

import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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

    public static final NodeSnapshot EMPTY = new NodeSnapshot(NameIndex.of(new NodeFacts[0]), new NodeFacts[0], emptyPods(0));

    /** name -> position; shared, never modified, by every snapshot with the same nodes in the same positions. */
    private final NameIndex positions;
    private final NodeFacts[] facts;
    private final List<BoundPod>[] boundPods;

    private NodeSnapshot(NameIndex positions, NodeFacts[] facts, List<BoundPod>[] boundPods) {
        this.positions = positions;
        this.facts = facts;
        this.boundPods = boundPods;
    }

    /** A snapshot of the given nodes, in the given order, with the GPU pods bound to each. */
    public static NodeSnapshot of(List<NodeFacts> nodes, Map<String, List<BoundPod>> podsByNode) {
        var facts = nodes.toArray(NodeFacts[]::new);
        var pods = emptyPods(facts.length);
        for (int i = 0; i < facts.length; i++) {
            pods[i] = List.copyOf(podsByNode.getOrDefault(facts[i].name(), List.of()));
        }
        return new NodeSnapshot(NameIndex.of(facts), facts, pods);
    }

    public int size() {
        return facts.length;
    }

    /** The node's position, or -1 when the snapshot does not hold it. */
    public int positionOf(String name) {
        return positions.positionOf(name);
    }

    /**
     * The position of the node named by the ASCII bytes {@code [from, to)} (a request's name as it came, no String
     * made), or -1 when the snapshot holds no node of that name.
     */
    public int positionOf(byte[] ascii, int from, int to) {
        return positions.positionOf(ascii, from, to);
    }

    /**
     * Whether the node at {@code position} is named by the ASCII bytes {@code [from, to)}: a position expected from an
     * earlier request, checked with one compare instead of a hash lookup.
     */
    public boolean isNamed(int position, byte[] ascii, int from, int to) {
        return position >= 0 && position < facts.length && positions.isNamed(position, ascii, from, to);
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
        var newFacts = Arrays.copyOf(facts, facts.length + 1);
        newFacts[facts.length] = node;
        var newPods = Arrays.copyOf(boundPods, boundPods.length + 1);
        newPods[boundPods.length] = List.of();
        return new NodeSnapshot(NameIndex.of(newFacts), newFacts, newPods);
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
        var newFacts = Arrays.copyOf(facts, last);
        var newPods = Arrays.copyOf(boundPods, last);
        if (at != last) {
            newFacts[at] = facts[last];
            newPods[at] = boundPods[last];
        }
        return new NodeSnapshot(NameIndex.of(newFacts), newFacts, newPods);
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

    /**
     * Node name -> position, as open addressing over flat arrays: a probe reads two ints and compares one
     * name, where a HashMap walks a node, its key and a boxed position, each likely a cache miss at 5,000 nodes.
     */
    private static final class NameIndex {

        /** position + 1 in each slot, 0 for an empty one; at most half the slots are used. */
        private final int[] slots;
        /** the hash of the name in each used slot */
        private final int[] hashes;
        private final String[] names;
        /** each name's characters as bytes where they are all ASCII (a node name always is); null for another */
        private final byte[][] ascii;

        private NameIndex(int[] slots, int[] hashes, String[] names, byte[][] ascii) {
            this.slots = slots;
            this.hashes = hashes;
            this.names = names;
            this.ascii = ascii;
        }

        static NameIndex of(NodeFacts[] nodes) {
            int capacity = Integer.highestOneBit(Math.max(4, nodes.length) * 2) * 2;
            var index = new NameIndex(new int[capacity], new int[capacity], new String[nodes.length], new byte[nodes.length][]);
            for (int position = 0; position < nodes.length; position++) {
                var name = nodes[position].name();
                if (index.positionOf(name) >= 0) {
                    throw new IllegalArgumentException("node " + name + " given twice");
                }
                index.names[position] = name;
                index.ascii[position] = isAscii(name) ? name.getBytes(StandardCharsets.US_ASCII) : null;
                int hash = name.hashCode();
                int slot = index.firstSlot(hash);
                while (index.slots[slot] != 0) {
                    slot = (slot + 1) & (capacity - 1);
                }
                index.slots[slot] = position + 1;
                index.hashes[slot] = hash;
            }
            return index;
        }

        int positionOf(String name) {
            int hash = name.hashCode();
            for (int slot = firstSlot(hash); ; slot = (slot + 1) & (slots.length - 1)) {
                int entry = slots[slot];
                if (entry == 0) {
                    return -1;
                }
                if (hashes[slot] == hash && names[entry - 1].equals(name)) {
                    return entry - 1;
                }
            }
        }

        /**
         * The position of the ASCII name in {@code bytes[from, to)}: its hash is String's (for ASCII a character is its
         * byte), so it probes the slots a String of the same name would, comparing bytes instead of characters.
         */
        int positionOf(byte[] bytes, int from, int to) {
            int hash = 0;
            for (int i = from; i < to; i++) {
                hash = 31 * hash + bytes[i];
            }
            int length = to - from;
            for (int slot = firstSlot(hash); ; slot = (slot + 1) & (slots.length - 1)) {
                int entry = slots[slot];
                if (entry == 0) {
                    return -1;
                }
                if (hashes[slot] == hash) {
                    var name = ascii[entry - 1];
                    if (name != null && name.length == length && Arrays.equals(name, 0, length, bytes, from, to)) {
                        return entry - 1;
                    }
                }
            }
        }

        boolean isNamed(int position, byte[] bytes, int from, int to) {
            var name = ascii[position];
            return name != null && Arrays.equals(name, 0, name.length, bytes, from, to);
        }

        private static boolean isAscii(String name) {
            for (int i = 0; i < name.length(); i++) {
                if (name.charAt(i) >= 0x80) {
                    return false;
                }
            }
            return true;
        }

        /** Spreads the high bits down: names like node-00001, node-00002 differ in their low bits only. */
        private int firstSlot(int hash) {
            int mixed = (hash ^ (hash >>> 16)) * 0x9E3779B9;
            return (mixed ^ (mixed >>> 16)) & (slots.length - 1);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<BoundPod>[] emptyPods(int size) {
        return new List[size];
    }
}
