package io.hetgpu.simulator;

import java.util.List;

/**
 * How much a multi-GPU job slows down for where its GPUs are, as a factor on its speed (stated in the README; an
 * assumption, set with {@code --communication}): one node's NVLink-connected set 1.0; one node over PCIe
 * {@code pcieSet} (0.85); several nodes of one rack {@code sameRack} (0.75); several racks {@code crossRack} (0.6).
 * Single-GPU jobs are never slowed.
 */
public record CommunicationModel(double pcieSet, double sameRack, double crossRack) {

    static final double NVLINK_SET = 1.0;
    public static final CommunicationModel DEFAULTS = new CommunicationModel(0.85, 0.75, 0.6);

    public CommunicationModel {
        for (double factor : new double[] {pcieSet, sameRack, crossRack}) {
            if (!(factor > 0 && factor <= 1)) {
                throw new IllegalArgumentException("--communication: expected factors above 0 and at most 1, got " + factor);
            }
        }
    }

    /** "PCIE,RACK,CROSS", e.g. "0.85,0.75,0.6"; an {@link IllegalArgumentException} naming the option otherwise. */
    public static CommunicationModel parse(String text) {
        var parts = text.split(",");
        if (parts.length == 3) {
            try {
                return new CommunicationModel(Double.parseDouble(parts[0].strip()), Double.parseDouble(parts[1].strip()),
                        Double.parseDouble(parts[2].strip()));
            } catch (NumberFormatException e) {
                // said below
            }
        }
        throw new IllegalArgumentException("--communication: expected PCIE,RACK,CROSS factors such as 0.85,0.75,0.6, got \"" + text + "\"");
    }

    @Override
    public String toString() {
        return pcieSet + "," + sameRack + "," + crossRack;
    }

    double factor(Job job, List<Placer.PodPlacement> placements, ClusterInventory inventory) {
        if (job.gpus() < 2) {
            return 1.0;
        }
        var gpuPods = placements.stream().filter(p -> !p.set().positions().isEmpty()).toList();
        long nodes = gpuPods.stream().mapToInt(Placer.PodPlacement::node).distinct().count();
        if (nodes > 1) {
            long racks = gpuPods.stream().map(p -> inventory.nodes().get(p.node()).rack()).distinct().count();
            return racks > 1 ? crossRack : sameRack;
        }
        return onNvlink(job, placements) ? NVLINK_SET : pcieSet;
    }

    /** Every GPU of the job in one NVLink-connected set on one node. */
    static boolean onNvlink(Job job, List<Placer.PodPlacement> placements) {
        var gpuPods = placements.stream().filter(p -> !p.set().positions().isEmpty()).toList();
        return gpuPods.size() == 1 && gpuPods.getFirst().set().nvlinkConnected();
    }
}
