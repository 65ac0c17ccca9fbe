package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.SchedulingPod;

/**
 * The pod that found no node and may evict others for one.
 *
 * @param neverPreempts     {@code spec.preemptionPolicy: Never}
 * @param nominatedNodeName {@code status.nominatedNodeName}, empty when none
 */
public record Preemptor(String uid, SchedulingPod pod, int priority, boolean neverPreempts, String nominatedNodeName) {
}
