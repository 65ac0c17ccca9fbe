package io.hetgpu.extender.model;

import java.time.Instant;

/**
 * A pod already bound to a node that holds (or is about to hold) GPUs there.
 *
 * @param uid           the pod's UID
 * @param gpuCount      GPUs it holds
 * @param requireNvlink whether it asked for an NVLink set (the device plugin then picked one)
 * @param boundAt       when it was bound (its PodScheduled condition, else its creation time)
 */
public record BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt) {
}
