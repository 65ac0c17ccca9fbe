package io.hetgpu.simulator;

import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.kubescheduler.selection.HostSelection;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.util.List;
import java.util.Random;

/**
 * kube-scheduler without hetgpu: a node fits when it has room for the pod's cpu and memory and enough
 * free GPUs of an accepted model (card constraints as node affinity on a model label); nodes are scored
 * as kube-scheduler's default profile scores them (LeastAllocated and BalancedAllocation over cpu and
 * memory: GPUs are not scored), and ties are broken as its selectHost does. The pod's GPUs are what the
 * device plugin prefers, as NVIDIA's plugin also picks a well-connected free set: the comparison is
 * about the choice of node, not of devices.
 */
final class KubernetesDefaultPlacer implements Placer {

    static final String NAME = "kubernetes-default";
    static final String WHOLE_WORKLOAD = "kubernetes-default-whole-workload";
    static final String NON_PREEMPTIVE = "kubernetes-default-no-preemption";

    private final TieBreak ties;
    private final Preempting preempting;
    private final Admission admission;

    /** kube-scheduler as clusters with PriorityClasses and no gang scheduling run it: pod by pod, with DefaultPreemption. */
    KubernetesDefaultPlacer(long seed) {
        this(TieBreak.random(new Random(seed)), Preempting.Kube.seeded(seed, PreemptVerb.NONE), Admission.POD_BY_POD);
    }

    /** Without preemption, pod by pod. */
    KubernetesDefaultPlacer(TieBreak ties) {
        this(ties, Preempting.NEVER, Admission.POD_BY_POD);
    }

    KubernetesDefaultPlacer(TieBreak ties, Preempting preempting, Admission admission) {
        this.ties = ties;
        this.preempting = preempting;
        this.admission = admission;
    }

    /** With DefaultPreemption, and every job admitted whole or not at all, as Kueue or the Workload API admit a workload. */
    static KubernetesDefaultPlacer wholeWorkload(long seed) {
        return new KubernetesDefaultPlacer(TieBreak.random(new Random(seed)), Preempting.Kube.seeded(seed, PreemptVerb.NONE),
                Admission.WHOLE_WORKLOAD);
    }

    /**
     * Never preempting, jobs admitted whole: the baseline of earlier releases, kept for continuity with their figures
     * (which were measured with whole-workload admission on both sides).
     */
    static KubernetesDefaultPlacer nonPreemptive(long seed) {
        return new KubernetesDefaultPlacer(TieBreak.random(new Random(seed)), Preempting.NEVER, Admission.WHOLE_WORKLOAD);
    }

    @Override
    public String name() {
        if (preempting instanceof Preempting.Never) {
            return NON_PREEMPTIVE;
        }
        return admission instanceof Admission.WholeWorkload ? WHOLE_WORKLOAD : NAME;
    }

    @Override
    public Preempting preempting() {
        return preempting;
    }

    @Override
    public Admission admission() {
        return admission;
    }

    @Override
    public PodPlacement placeOn(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster, int node) {
        var pod = job.pods().get(podIndex);
        return cluster.fits(node, pod) && hasAcceptedCards(job, cluster.nodes().get(node), cluster.free(node), pod.gpus())
                ? new PodPlacement(node, cluster.deviceGrant(node, pod.gpus())) : null;
    }

    @Override
    public PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        var pod = job.pods().get(podIndex);
        var selection = new HostSelection<Integer>(ties);
        var nodes = cluster.nodes();
        for (int i = 0; i < nodes.size(); i++) {
            if (!cluster.fits(i, pod) || !hasAcceptedCards(job, nodes.get(i), cluster.free(i), pod.gpus())) {
                continue;
            }
            selection.offer(i, KubeScore.of(cluster, i, pod));
        }
        var chosen = selection.chosen();
        return chosen == null ? null : new PodPlacement(chosen, cluster.deviceGrant(chosen, pod.gpus()));
    }

    /** Enough free GPUs of an accepted model; a pod without GPUs but with a model constraint needs such cards on the node. */
    private static boolean hasAcceptedCards(Job job, SimNode node, long free, int gpus) {
        if (job.models().isEmpty() && job.minMemoryMiB() == 0) {
            return true;
        }
        long eligible = acceptedCards(job, node);
        return Long.bitCount(free & eligible) >= gpus && !(gpus == 0 && !job.models().isEmpty() && eligible == 0);
    }

    /** The node's GPUs (as a position mask) that the job's card constraints accept. */
    static long acceptedCards(Job job, SimNode node) {
        var topology = node.gpus().topology();
        long mask = 0;
        for (int p = 0; p < topology.size(); p++) {
            if (accepts(job, topology.device(p))) {
                mask |= 1L << p;
            }
        }
        return mask;
    }

    static boolean accepts(Job job, GpuDevice device) {
        return (job.models().isEmpty() || job.models().contains(device.model())) && device.memoryMiB() >= job.minMemoryMiB()
                && device.isHealthy();
    }
}
