package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.GpuSet;
import java.util.List;

/**
 * A node that passed the filters, with what it would give the pod. Immutable.
 *
 * <p>Besides the node and the set it keeps, flat, the few figures of theirs that the scorers read: a whole job's plan
 * scores the same few thousand candidates for each of its members, and reading them through the node and the set was a
 * cache miss or two per candidate each time.
 */
public final class Candidate {

    static final GpuSet NO_GPUS = new GpuSet(List.of(), 0, 0, false);

    private final NodeState node;
    private final GpuSet set;
    private final int tierRank;
    private final long spareMask;
    private final long linkScore;
    private final boolean linksKnown;
    private final double takenAfter;
    private final int spareGpus;
    private final String rack;
    private final String zone;
    private final int rackHash;
    private final int zoneHash;
    private final int nameHash;

    private Candidate(NodeState node, GpuSet set, int tierRank, long spareMask) {
        this.node = node;
        this.set = set;
        this.tierRank = tierRank;
        this.spareMask = spareMask;
        this.linkScore = set.linkScore();
        this.linksKnown = node.gpus().source().knowsNvlink();
        int size = node.gpus().size();
        this.takenAfter = size == 0 ? 0 : (size - node.freeCount() + set.size()) / (double) size;
        this.spareGpus = spareGpus(node);
        this.rack = node.rack();
        this.zone = node.zone();
        this.rackHash = rack.hashCode();
        this.zoneHash = zone.hashCode();
        this.nameHash = node.name().hashCode();
    }

    /**
     * @param eligibleMask the node's healthy GPUs that pass the pod's device filters, taken or not
     */
    static Candidate of(NodeState node, GpuSet set, int tierRank, long eligibleMask) {
        return new Candidate(node, set, tierRank, eligibleMask & ~DeviceMask.of(set.positions()));
    }

    public NodeState node() {
        return node;
    }

    /** The GPU set the shared allocator would pick (empty for a pod without GPUs). */
    public GpuSet set() {
        return set;
    }

    /** The tier of the weakest card in the set (0 when the set is empty). */
    public int tierRank() {
        return tierRank;
    }

    /**
     * The node's healthy GPUs that pass the pod's device filters, taken or not (every healthy GPU for a pod without GPUs),
     * less the set: the cards the job's other pods, asking alike, could have there.
     */
    public long spareMask() {
        return spareMask;
    }

    /** The set's link score. */
    public long linkScore() {
        return linkScore;
    }

    /** Whether the node's links are known (hetgpu's device plugin measured them, its DRA driver published its NVLink sets) rather than guessed. */
    public boolean linksKnown() {
        return linksKnown;
    }

    /** The share of the node's GPUs that no pod could be given once this one holds the set. */
    public double takenAfter() {
        return takenAfter;
    }

    public String name() {
        return node.name();
    }

    /** The card model the set is made of, for explanations ("" when none). */
    public String model() {
        return set.size() == 0 ? "" : node.gpus().topology().device(set.positions().getFirst()).model();
    }

    /**
     * The eligible GPUs free on {@code state} (this node now, or as preemption could leave it) besides the pod's own set:
     * the room left there for the job's pods that still wait.
     */
    public int spareGpus(NodeState state) {
        return Long.bitCount(spareMask & state.freeMask());
    }

    /** {@link #spareGpus(NodeState)} on the candidate's own node. */
    int spareGpus() {
        return spareGpus;
    }

    /** The node's rack label, as {@link NodeState#rack()}. */
    String rack() {
        return rack;
    }

    /** The node's zone label, as {@link NodeState#zone()}. */
    String zone() {
        return zone;
    }

    /** The hash of {@link #rack()}: tells without reading the label that a node is in none of a few racks. */
    int rackHash() {
        return rackHash;
    }

    /** The hash of {@link #zone()}, likewise. */
    int zoneHash() {
        return zoneHash;
    }

    /** The hash of the node's name: tells without reading the name that a node holds none of a few named ones. */
    int nameHash() {
        return nameHash;
    }

    @Override
    public String toString() {
        return "Candidate[" + node.name() + ", " + set + ", tier " + tierRank + "]";
    }
}
