package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.kubescheduler.CpuMemory;

/**
 * A node of the simulated cluster: its decoded GPUs (the extender's own form), where it stands and
 * what kube-scheduler may put on it.
 *
 * @param name        name
 * @param rack        rack label
 * @param zone        zone label ("" when the cluster has no zones)
 * @param gpus        devices, links, tiers and the shared allocator
 * @param allocatable the Node's allocatable cpu and memory
 */
public record SimNode(String name, String rack, String zone, NodeGpus gpus, CpuMemory allocatable) {

    /** kubelet's default maxPods, the Node's allocatable {@code pods} in the test cluster. */
    static final int MAX_PODS = 110;
}
