package io.hetgpu.simulator;

import io.hetgpu.gpu.allocation.GpuSet;
import java.util.List;

/** Chooses a node and GPUs for one pod of a job, as a scheduler would; null when no node fits now. */
public interface Placer {

    /** Where a pod went: the node's index in the inventory and the devices the device plugin gave it. */
    public record PodPlacement(int node, GpuSet set) {
        long mask() {
            long mask = 0;
            for (int position : set.positions()) {
                mask |= 1L << position;
            }
            return mask;
        }
    }

    String name();

    /**
     * @param earlier where the job's earlier pods went (already taken from {@code cluster})
     */
    PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster);

    /**
     * The pod on this node if it passes the scheduler's filters there, else null: kube-scheduler tries a preemptor's
     * nominated node before all others ({@code evaluateNominatedNode}).
     */
    PodPlacement placeOn(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster, int node);

    /**
     * Preemption's dry run beyond NodeResourcesFit (which the simulation checks itself): whether the pod's devices could be
     * had on the node once its victims are gone, {@code freed} being the GPUs (a position mask) the victims hold. Without
     * DRA the GPU count alone decides, so every node passes here.
     */
    default boolean fitsInDryRun(Job job, int podIndex, ClusterState cluster, int node, long freed) {
        return true;
    }

    /** Whether and how the scheduler preempts for a pod no node takes. */
    default Preempting preempting() {
        return Preempting.NEVER;
    }

    /** How the pods of a job of several get their nodes. */
    Admission admission();

    /** A run of a job this scheduler placed ended (completed or evicted): what a scheduler that learns learns from. */
    default void ended(EndedRun run) {
    }

    /** What this scheduler learned over the trace, for the report; {@link Learning.Figures#NONE} if it does not learn. */
    default Learning.Figures learned() {
        return Learning.Figures.NONE;
    }
}
