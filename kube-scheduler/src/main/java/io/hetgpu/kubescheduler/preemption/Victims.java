package io.hetgpu.kubescheduler.preemption;

import java.util.List;

/**
 * What preempting on one node costs: the pods evicted, most important first, and how many of them break a
 * PodDisruptionBudget (extenderv1.Victims).
 */
public record Victims(List<RunningPod> pods, int pdbViolations) {

    public Victims {
        pods = List.copyOf(pods);
    }
}
