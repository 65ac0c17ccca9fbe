package io.hetgpu.simulator;

import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.PlacementPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * kube-scheduler with hetgpu's extender: the extender's own {@link PlacementPolicy} filters and scores
 * every node (built as {@code ExtenderService} builds them), kube-scheduler adds its LeastAllocated
 * score to 10 x {@link KubeScore#EXTENDER_WEIGHT} x hetgpu's score, and ties are broken at random. The
 * pod gets the set the policy's candidate offers: the shared allocator's, which the device plugin runs.
 */
final class HetgpuPlacer implements Placer {

    private final String name;
    private final PlacementPolicy policy;
    private final boolean namesWorkload;
    private final Random random;

    /**
     * @param namesWorkload whether pods carry {@code hetgpu.io/workload} (their Gavel job type)
     */
    HetgpuPlacer(String name, PlacementPolicy policy, boolean namesWorkload, long seed) {
        this.name = name;
        this.policy = policy;
        this.namesWorkload = namesWorkload;
        this.random = new Random(seed);
    }

    @Override
    public String name() {
        return name;
    }

    static PodRequest request(Job job, int podIndex, boolean namesWorkload) {
        var pod = job.pods().get(podIndex);
        return new PodRequest("sim", "job-" + job.id() + "-" + podIndex, "", pod.gpus(), job.models(), job.minMemoryMiB(),
                PodRequest.ANY_COMPUTE_CAPABILITY, false, job.priority(), PriorityHint.UNSET, GpuPreference.UNSET,
                job.distributed() ? "job-" + job.id() : "", pod.role(), List.of(),
                namesWorkload ? GavelThroughputs.workloadClass(job.type()) : "");
    }

    static PlacementContext context(Job job, List<PodPlacement> earlier, ClusterState cluster) {
        var peers = new ArrayList<PeerLocation>(earlier.size());
        for (int i = 0; i < earlier.size(); i++) {
            var node = cluster.nodes().get(earlier.get(i).node());
            peers.add(new PeerLocation("job-" + job.id() + "-" + i, node.name(), node.rack(), ""));
        }
        var volumes = job.dataRack().isEmpty() ? List.<DataLocality>of()
                : List.of(new DataLocality(Set.of(), Set.of(job.dataRack()), Set.of()));
        return new PlacementContext(peers, volumes);
    }

    @Override
    public PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        var request = request(job, podIndex, namesWorkload);
        var table = policy.prioritize(request, cluster.states(), context(job, earlier, cluster));
        PodPlacement best = null;
        long bestScore = -1;
        int ties = 0;
        var rows = table.rows();
        for (int i = 0; i < rows.size(); i++) {
            var row = rows.get(i);
            if (row.candidate() == null) {
                continue;
            }
            var node = cluster.nodes().get(i);
            long score = KubeScore.leastAllocated(node, Long.bitCount(cluster.free(i)), request.gpuCount())
                    + 10L * KubeScore.EXTENDER_WEIGHT * row.score();
            if (score > bestScore) {
                bestScore = score;
                best = new PodPlacement(i, row.candidate().set());
                ties = 1;
            } else if (score == bestScore && random.nextInt(++ties) == 0) {
                best = new PodPlacement(i, row.candidate().set());
            }
        }
        return best;
    }
}
