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

    /**
     * Whether the pod may have been bound after a free list read at {@code readAt}, so that the list can
     * still show its GPUs free. The API server stamps conditions to the second: a stamp of exactly
     * 12:00:00 means some time before 12:00:01, so it counts as later than a read at 12:00:00.5. Such a
     * pod is briefly counted twice (held and promised), which only makes its node look fuller.
     */
    public boolean mayBeMissingFrom(Instant readAt) {
        var latest = boundAt.getNano() == 0 ? boundAt.plusSeconds(1) : boundAt;
        return latest.isAfter(readAt);
    }
}
