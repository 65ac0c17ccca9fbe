package io.hetgpu.testcluster.report;

import java.util.List;

/**
 * A node as the cluster picture draws it.
 *
 * @param name    node name
 * @param rack    rack label
 * @param machine what the node is (simulated profile or "cpu")
 * @param card    card model, or "cpu"
 * @param gpus    how many GPUs it has
 */
public record NodeView(String name, String rack, String machine, String card, int gpus) {
}
