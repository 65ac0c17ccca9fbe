package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.gpu.allocation.GpuSet;
import io.hetgpu.kubescheduler.CpuMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Which GPUs of each node are free and what its pods request, as the simulation runs. The one mutable
 * thing in a run. A pod's cpu and memory follow from its GPU count ({@link Job.Pod#requestsFor}), so
 * taking and giving back devices (none, for a pod without GPUs) accounts them too.
 */
final class ClusterState {

    private final List<SimNode> nodes;
    private final java.util.Map<String, Integer> indexByName = new java.util.HashMap<>();
    private final long[] free;
    private final CpuMemory[] requested;
    /** Per node: spec.priority to the GPUs its pods of that priority hold. */
    private final List<java.util.Map<Integer, Long>> heldByPriority;
    private final int[] pods;
    /** Single-pod jobs waiting for a node, by GPUs needed: the extender's informer counts waiting pods in no job so. */
    private final java.util.TreeMap<Integer, Integer> waitingBySize = new java.util.TreeMap<>();
    private int freeGpus;

    ClusterState(ClusterInventory inventory) {
        this.nodes = inventory.nodes();
        this.free = new long[nodes.size()];
        this.requested = new CpuMemory[nodes.size()];
        this.pods = new int[nodes.size()];
        this.heldByPriority = new ArrayList<>(nodes.size());
        for (int i = 0; i < free.length; i++) {
            free[i] = nodes.get(i).gpus().healthyMask();
            freeGpus += Long.bitCount(free[i]);
            requested[i] = CpuMemory.ZERO;
            indexByName.put(nodes.get(i).name(), i);
            heldByPriority.add(new java.util.HashMap<>());
        }
    }

    /** A single-pod job of {@code gpus} GPUs joined the queue ({@code change} 1) or left it (-1). */
    void waiting(int gpus, int change) {
        if (gpus > 0) {
            waitingBySize.merge(gpus, change, (count, delta) -> count + delta == 0 ? null : count + delta);
        }
    }

    /** The GPUs the waiting single-pod jobs of fewer than {@code gpus} GPUs need together. */
    int waitingGpusBelow(int gpus) {
        int needed = 0;
        for (var size : waitingBySize.headMap(gpus).entrySet()) {
            needed += size.getKey() * size.getValue();
        }
        return needed;
    }

    /** The node's index in the inventory. */
    int indexOf(String name) {
        var index = indexByName.get(name);
        if (index == null) {
            throw new IllegalArgumentException("no node " + name + " in the simulated cluster");
        }
        return index;
    }

    List<SimNode> nodes() {
        return nodes;
    }

    long free(int node) {
        return free[node];
    }

    int freeGpus() {
        return freeGpus;
    }

    /** What the pods on the node request. */
    CpuMemory requested(int node) {
        return requested[node];
    }

    /**
     * kube-scheduler's NodeResourcesFit filter: room for one more pod, its cpu and memory, and as many
     * free healthy GPUs as it asks for (kubelet advertises healthy devices only).
     */
    boolean fits(int node, Job.Pod pod) {
        return pods[node] < SimNode.MAX_PODS && Long.bitCount(free[node]) >= pod.gpus()
                && requested[node].plus(pod.requests()).fitsIn(nodes.get(node).allocatable());
    }

    /**
     * kube-scheduler's NodeResourcesFit for a pod of a job planned whole, with the pods planned before it on the node
     * counted as if bound: room for one more pod beside them, and for its cpu and memory. Its GPUs the plan counts.
     */
    boolean fitsBeside(int node, Job.Pod pod, List<Job.Pod> plannedThere) {
        var requests = requested[node].plus(pod.requests());
        for (var planned : plannedThere) {
            requests = requests.plus(planned.requests());
        }
        return pods[node] + plannedThere.size() < SimNode.MAX_PODS && requests.fitsIn(nodes.get(node).allocatable());
    }

    /**
     * The devices the pod gets once bound: what kubelet's device plugin answers GetPreferredAllocation,
     * i.e. the shared allocator's best-connected set among ALL the node's free healthy devices. The
     * plugin is not told the pod's card or memory requirements, so on a node with two kinds of card this
     * can differ from the set the extender's policy offered (see the placement check).
     */
    GpuSet deviceGrant(int node, int gpus) {
        return nodes.get(node).gpus().allocator().choose(free[node], 0, gpus, false)
                .orElseThrow(() -> new IllegalStateException(nodes.get(node).name() + " has no " + gpus + " free GPUs"));
    }

    /** Every node as the extender's policy sees it now. */
    List<NodeState> states() {
        var states = new ArrayList<NodeState>(nodes.size());
        for (int i = 0; i < free.length; i++) {
            states.add(state(i));
        }
        return states;
    }

    NodeState state(int node) {
        var sim = nodes.get(node);
        return new NodeState(sim.name(), sim.rack(), sim.zone(), sim.gpus(), free[node]);
    }

    /**
     * Every node as it would be with the GPUs of every pod below {@code priority} free: what preemption could free for a
     * pod of that priority. The extender's count ({@code ExtenderService.reachableBy}) where no PodDisruptionBudget guards
     * a pod: the simulated cluster has no budgets, nor a cordoned or tainted node ({@code ReachableEqualityTest} holds the
     * two equal).
     */
    List<NodeState> reachableBy(int priority) {
        var states = new ArrayList<NodeState>(nodes.size());
        for (int i = 0; i < free.length; i++) {
            long preemptible = 0;
            for (var held : heldByPriority.get(i).entrySet()) {
                if (held.getKey() < priority) {
                    preemptible |= held.getValue();
                }
            }
            states.add(state(i).withFreed(preemptible));
        }
        return states;
    }

    /** Takes devices for one pod of this priority; a device already taken is a simulator bug, never silently double-booked. */
    void take(int node, long mask, int priority) {
        if ((free[node] & mask) != mask) {
            throw new IllegalStateException("GPUs " + Long.toBinaryString(mask) + " of " + nodes.get(node).name()
                    + " double-booked (free " + Long.toBinaryString(free[node]) + ")");
        }
        free[node] &= ~mask;
        heldByPriority.get(node).merge(priority, mask, (a, b) -> a | b);
        freeGpus -= Long.bitCount(mask);
        requested[node] = requested[node].plus(Job.Pod.requestsFor(Long.bitCount(mask)));
        pods[node]++;
    }

    /** Gives back what one pod of this priority took. */
    void give(int node, long mask, int priority) {
        if ((free[node] & mask) != 0) {
            throw new IllegalStateException("GPUs of " + nodes.get(node).name() + " released twice");
        }
        free[node] |= mask;
        heldByPriority.get(node).computeIfPresent(priority, (p, held) -> (held & ~mask) == 0 ? null : held & ~mask);
        freeGpus += Long.bitCount(mask);
        requested[node] = requested[node].minus(Job.Pod.requestsFor(Long.bitCount(mask)));
        pods[node]--;
    }
}
