package io.hetgpu.simulator;

import java.util.List;

/**
 * How much a multi-GPU job slows down for where its GPUs are, as a factor on its speed (stated in the
 * README): one node's NVLink-connected set 1.0; one node over PCIe 0.85; several nodes of one rack
 * 0.75; several racks 0.6. Single-GPU jobs are never slowed.
 */
final class CommunicationModel {

    static final double NVLINK_SET = 1.0;
    static final double PCIE_SET = 0.85;
    static final double SAME_RACK = 0.75;
    static final double CROSS_RACK = 0.6;

    private CommunicationModel() {
    }

    static double factor(Job job, List<Placer.PodPlacement> placements, ClusterInventory inventory) {
        if (job.gpus() < 2) {
            return 1.0;
        }
        var gpuPods = placements.stream().filter(p -> !p.set().positions().isEmpty()).toList();
        long nodes = gpuPods.stream().mapToInt(Placer.PodPlacement::node).distinct().count();
        if (nodes > 1) {
            long racks = gpuPods.stream().map(p -> inventory.nodes().get(p.node()).rack()).distinct().count();
            return racks > 1 ? CROSS_RACK : SAME_RACK;
        }
        return onNvlink(job, placements) ? NVLINK_SET : PCIE_SET;
    }

    /** Every GPU of the job in one NVLink-connected set on one node. */
    static boolean onNvlink(Job job, List<Placer.PodPlacement> placements) {
        var gpuPods = placements.stream().filter(p -> !p.set().positions().isEmpty()).toList();
        return gpuPods.size() == 1 && gpuPods.getFirst().set().nvlinkConnected();
    }
}
