package io.hetgpu.testcluster.report;

import java.util.List;

/**
 * A pod evicted by preemption, as the demo shows it.
 *
 * @param pod          the pod's name
 * @param node         where it ran
 * @param gpus         the GPU indices it held there
 * @param gpuHoursLost the work it loses: GPU-hours since its last checkpoint
 */
public record Eviction(String pod, String node, List<Integer> gpus, double gpuHoursLost) {

    public Eviction {
        gpus = List.copyOf(gpus);
    }
}
