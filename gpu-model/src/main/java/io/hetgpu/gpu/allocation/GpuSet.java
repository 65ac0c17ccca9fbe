package io.hetgpu.gpu.allocation;

import java.util.List;

/**
 * A chosen set of GPUs and why it won.
 *
 * @param positions       device positions in the topology, ascending
 * @param linkScore       sum of pair scores inside the set (NVIDIA's allocator's scale: 100 per NVLink link, PCIe 10..60)
 * @param leftoverScore   sum of pair scores among the available devices the set leaves free
 * @param nvlinkConnected every GPU of the set reaches every other over NVLink (directly or through set members)
 */
public record GpuSet(List<Integer> positions, long linkScore, long leftoverScore, boolean nvlinkConnected) {

    public GpuSet {
        positions = List.copyOf(positions);
    }

    public int size() {
        return positions.size();
    }
}
