package io.hetgpu.testcluster.report;

import java.util.List;

/**
 * A node as the cluster picture draws it.
 *
 * @param name         node name
 * @param rack         rack label
 * @param zone         zone label
 * @param machine      what the node is (simulated profile or "cpu")
 * @param card         card model, or "cpu"
 * @param gpus         how many GPUs it has
 * @param memoryGiB    memory of one GPU, GiB (0 on a CPU node)
 * @param islands      its NVLink islands of two GPUs or more, by GPU index (empty where GPUs reach each other over PCIe only)
 * @param interconnect how its GPUs are joined, in words ("NVSwitch, 18 NVLinks per GPU", "PCIe only")
 */
public record NodeView(String name, String rack, String zone, String machine, String card, int gpus, long memoryGiB,
                       List<List<Integer>> islands, String interconnect) {

    public NodeView {
        islands = islands.stream().map(List::copyOf).toList();
    }

    /** A CPU-only node. */
    public static NodeView cpu(String name, String rack, String zone) {
        return new NodeView(name, rack, zone, "cpu", "cpu", 0, 0, List.of(), "");
    }

    /** The island holding GPU {@code index}, or -1 where it is in none. */
    public int islandOf(int index) {
        for (int i = 0; i < islands.size(); i++) {
            if (islands.get(i).contains(index)) {
                return i;
            }
        }
        return -1;
    }
}
