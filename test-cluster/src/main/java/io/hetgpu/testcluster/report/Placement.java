package io.hetgpu.testcluster.report;

import java.util.List;

/**
 * Where one pod went and what it got, as the demo reports it.
 *
 * @param pod       namespace/name
 * @param job       the training job (or workload) the pod belongs to
 * @param role      ps, worker, chief, sweep, serving…
 * @param priority  high, normal or low
 * @param node      the node, or empty when the pod is still pending
 * @param rack      the node's rack
 * @param card      the card model of its GPUs, or "cpu"
 * @param gpus      the GPU indices on the node it was given
 * @param nvlinkSet whether those GPUs form one NVLink-connected set (always true for one GPU)
 * @param data      distance to its training data
 */
public record Placement(String pod, String job, String role, String priority, String node, String rack, String card,
                        List<Integer> gpus, boolean nvlinkSet, DataDistance data) {

    public Placement {
        gpus = List.copyOf(gpus);
    }

    public boolean isPlaced() {
        return !node.isEmpty();
    }
}
