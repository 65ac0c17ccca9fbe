package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeGpus;

/**
 * A node of the simulated cluster: its decoded GPUs (the extender's own form) and where it stands.
 *
 * @param name name
 * @param rack rack label
 * @param gpus devices, links, tiers and the shared allocator
 */
public record SimNode(String name, String rack, NodeGpus gpus) {
}
