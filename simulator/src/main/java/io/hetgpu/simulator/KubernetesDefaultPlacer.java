package io.hetgpu.simulator;

import io.hetgpu.gpu.GpuDevice;
import java.util.List;
import java.util.Random;

/**
 * kube-scheduler without hetgpu: a node fits when it has enough free GPUs of an accepted model (card
 * constraints as node affinity on a model label), the least allocated node wins (NodeResourcesFit's
 * default LeastAllocated strategy, over GPUs), and ties are broken at random as kube-scheduler does.
 * The GPUs within the node are the shared allocator's pick, as NVIDIA's device plugin also picks the
 * best-connected free set: the comparison is about the choice of node, not of devices.
 */
final class KubernetesDefaultPlacer implements Placer {

    private final Random random;

    KubernetesDefaultPlacer(long seed) {
        this.random = new Random(seed);
    }

    @Override
    public String name() {
        return "kubernetes-default";
    }

    @Override
    public PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        int gpus = job.pods().get(podIndex).gpus();
        PodPlacement best = null;
        long bestScore = -1;
        int ties = 0;
        var nodes = cluster.nodes();
        for (int i = 0; i < nodes.size(); i++) {
            var node = nodes.get(i);
            var topology = node.gpus().topology();
            long eligible = 0;
            for (int p = 0; p < topology.size(); p++) {
                if (accepts(job, topology.device(p))) {
                    eligible |= 1L << p;
                }
            }
            long free = cluster.free(i) & eligible;
            if (Long.bitCount(free) < gpus || gpus == 0 && !job.models().isEmpty() && eligible == 0) {
                continue;
            }
            var set = node.gpus().allocator().choose(free, 0, gpus, false);
            if (set.isEmpty()) {
                continue;
            }
            long score = KubeScore.leastAllocated(node, Long.bitCount(cluster.free(i)), gpus);
            if (score > bestScore) {
                bestScore = score;
                best = new PodPlacement(i, set.get());
                ties = 1;
            } else if (score == bestScore && random.nextInt(++ties) == 0) {
                best = new PodPlacement(i, set.get());
            }
        }
        return best;
    }

    static boolean accepts(Job job, GpuDevice device) {
        return (job.models().isEmpty() || job.models().contains(device.model())) && device.memoryMiB() >= job.minMemoryMiB()
                && device.isHealthy();
    }
}
