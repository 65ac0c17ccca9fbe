package io.hetgpu.kubescheduler.dra;

import java.util.List;

/**
 * A ResourceSlice's spec as the allocator reads it. A pool may span several slices: those of its highest
 * {@code poolGeneration} count, and the pool is complete when there are {@code resourceSliceCount} of them.
 *
 * @param nodeName the node whose devices these are, or empty
 * @param allNodes devices reachable from every node (network-attached)
 */
public record ResourceSlice(String name, String driver, String pool, long poolGeneration, long resourceSliceCount,
                            String nodeName, boolean allNodes, List<Device> devices) {

    public ResourceSlice {
        nodeName = nodeName == null ? "" : nodeName;
        devices = List.copyOf(devices);
    }

    /** One node's only slice of one pool, as a node-local driver (NVIDIA's) publishes it. */
    public static ResourceSlice nodeLocal(String name, String driver, String node, List<Device> devices) {
        return new ResourceSlice(name, driver, node, 1, 1, node, false, devices);
    }
}
