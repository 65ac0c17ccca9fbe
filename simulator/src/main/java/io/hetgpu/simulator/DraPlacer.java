package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import io.hetgpu.kubescheduler.selection.HostSelection;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * kube-scheduler with DRA, pod by pod, as a cluster on 1.35 or later runs it: each GPU pod's one ResourceClaim is
 * allocated by the structured allocator ({@link DraAllocations}) on every node that passes NodeResourcesFit, and the
 * allocation is the pod's GPUs. Nodes are scored as {@link KubernetesDefaultPlacer} scores them plus the DynamicResources
 * plugin's prioritized-list score ({@link PrioritizedListScore}, normalized), ties broken alike. Preemption, admission,
 * completion times and checkpoints are the simulation's, as for {@code kubernetes-default}.
 *
 * <p>Two ways to write the claim: {@link Claims#FIRST_FIT}, {@code exactly} the pod's GPU count of hetgpu's DeviceClass
 * (the first free devices that fit); {@link Claims#HETGPU}, the claim hetgpu's shipped template gives the pod's priority
 * level and count ({@link HetgpuClaims#claim}). A job's card constraints (node affinity on a model label for the other
 * policies) take only the devices they accept, as a selector on the model would.
 *
 * <p>Preemption: through 1.37 the DynamicResources plugin frees nothing in preemption's dry run (it has no RemovePod), so a
 * victim's devices still count allocated and a pod whose claim finds no free devices gets no candidate node. With
 * {@code releasesOnPreemption}, the dry run frees the victims' devices, as kube-scheduler does behind the
 * {@code DRAPreemption} gate ({@code ClaimRelease} in the kube-scheduler module).
 */
final class DraPlacer implements Placer {

    static final String FIRST_FIT = "kubernetes-dra-first-fit";
    static final String HETGPU_CLAIMS = "kubernetes-dra-hetgpu-claims";
    /** How the names of the runs whose preemption's dry run frees the victims' devices (DRAPreemption) end. */
    static final String PREEMPT_SUFFIX = "-preempt";

    /** How a pod's claim is written. */
    enum Claims {
        FIRST_FIT, HETGPU
    }

    private final Claims claims;
    private final boolean releasesOnPreemption;
    private final TieBreak ties;
    private final Preempting preempting;
    private final DraAllocations allocations;
    /** Pods without GPUs have no claim: kube-scheduler's own filters and scores, the same tie-break. */
    private final KubernetesDefaultPlacer withoutClaims;
    /** One claim per shape (level and count), bounded by the GPUs a node can hold. */
    private final Map<Integer, Claim> shapes = new HashMap<>();

    DraPlacer(Claims claims, boolean releasesOnPreemption, ClusterInventory inventory, long seed) {
        this(claims, releasesOnPreemption, TieBreak.random(new Random(seed)), Preempting.Kube.seeded(seed, PreemptVerb.NONE),
                new DraAllocations(inventory.nodes(), inventory.catalog(), DraLimits.DEFAULTS, DraAllocations.DEFAULT_MAX_ENTRIES));
    }

    DraPlacer(Claims claims, boolean releasesOnPreemption, TieBreak ties, Preempting preempting, DraAllocations allocations) {
        this.claims = claims;
        this.releasesOnPreemption = releasesOnPreemption;
        this.ties = ties;
        this.preempting = preempting;
        this.allocations = allocations;
        this.withoutClaims = new KubernetesDefaultPlacer(ties, preempting, Admission.POD_BY_POD);
    }

    @Override
    public String name() {
        return (claims == Claims.HETGPU ? HETGPU_CLAIMS : FIRST_FIT) + (releasesOnPreemption ? PREEMPT_SUFFIX : "");
    }

    @Override
    public Preempting preempting() {
        return preempting;
    }

    @Override
    public Admission admission() {
        return Admission.POD_BY_POD;
    }

    /** The priority level hetgpu's admission policy reads from spec.priority (its thresholds, 1000 and -1, as shipped). */
    static HetgpuClaims.Priority level(int priority) {
        return priority >= Job.HIGH_PRIORITY ? HetgpuClaims.Priority.HIGH
                : priority <= Job.LOW_PRIORITY ? HetgpuClaims.Priority.LOW : HetgpuClaims.Priority.NORMAL;
    }

    private int shape(Job job, int gpus) {
        return claims == Claims.HETGPU ? level(job.priority()).ordinal() * (NodeGpus.MAX_GPUS + 1) + gpus : gpus;
    }

    private Claim claim(int shape, Job job, int gpus) {
        return shapes.computeIfAbsent(shape, s -> claims == Claims.HETGPU
                ? HetgpuClaims.claim("sim", HetgpuClaims.REQUEST, level(job.priority()), gpus)
                : HetgpuClaims.plain("sim", HetgpuClaims.REQUEST, gpus));
    }

    /** The GPUs of the node the pod's claim may take: the free ones its job's card constraints accept. */
    private static long usable(Job job, ClusterState cluster, int node, long free) {
        return job.models().isEmpty() && job.minMemoryMiB() == 0 ? free : free & KubernetesDefaultPlacer.acceptedCards(job, cluster.nodes().get(node));
    }

    private DraAllocations.Allocation allocate(Job job, int gpus, ClusterState cluster, int node, long free) {
        int shape = shape(job, gpus);
        return allocations.allocate(shape, claim(shape, job, gpus), node, usable(job, cluster, node, free));
    }

    @Override
    public PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        var pod = job.pods().get(podIndex);
        if (pod.gpus() == 0) {
            return withoutClaims.place(job, podIndex, earlier, cluster);
        }
        var feasible = new LinkedHashMap<Integer, DraAllocations.Allocation>();
        var raw = new LinkedHashMap<Integer, Long>();
        for (int i = 0; i < cluster.nodes().size(); i++) {
            if (!cluster.fits(i, pod)) {
                continue;
            }
            var allocation = allocate(job, pod.gpus(), cluster, i, cluster.free(i));
            if (allocation != null) {
                feasible.put(i, allocation);
                raw.put(i, allocation.rawScore());
            }
        }
        if (feasible.isEmpty()) {
            return null;
        }
        var selection = new HostSelection<Integer>(ties);
        if (feasible.size() == 1) {
            // kube-scheduler skips scoring when one node is left.
            selection.offer(feasible.keySet().iterator().next(), 0);
        } else {
            var dra = PrioritizedListScore.normalized(raw);
            for (int node : feasible.keySet()) {
                selection.offer(node, KubeScore.of(cluster, node, pod) + dra.get(node));
            }
        }
        int chosen = selection.chosen();
        return placement(cluster, chosen, feasible.get(chosen));
    }

    @Override
    public PodPlacement placeOn(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster, int node) {
        var pod = job.pods().get(podIndex);
        if (pod.gpus() == 0) {
            return withoutClaims.placeOn(job, podIndex, earlier, cluster, node);
        }
        if (!cluster.fits(node, pod)) {
            return null;
        }
        var allocation = allocate(job, pod.gpus(), cluster, node, cluster.free(node));
        return allocation == null ? null : placement(cluster, node, allocation);
    }

    @Override
    public boolean fitsInDryRun(Job job, int podIndex, ClusterState cluster, int node, long freed) {
        int gpus = job.pods().get(podIndex).gpus();
        if (gpus == 0) {
            return true;
        }
        long free = cluster.free(node) | (releasesOnPreemption ? freed : 0);
        return allocate(job, gpus, cluster, node, free) != null;
    }

    /** The pod's GPUs as the set the allocator took (its NVLink connection judged by the node's links, as for every policy). */
    private static PodPlacement placement(ClusterState cluster, int node, DraAllocations.Allocation allocation) {
        var set = cluster.nodes().get(node).gpus().allocator().choose(0, allocation.mask(), Long.bitCount(allocation.mask()), false)
                .orElseThrow(() -> new IllegalStateException("the allocator's GPUs " + Long.toBinaryString(allocation.mask())
                        + " are not a set of " + cluster.nodes().get(node).name()));
        return new PodPlacement(node, set);
    }
}
