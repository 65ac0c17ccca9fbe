package io.hetgpu.extender.policy;

import java.util.Objects;

/**
 * Everything an admin sets about placement (the {@code policy:} group of the extender's configuration file).
 *
 * @param thresholds  spec.priority at or above {@code high} prefers the newest cards, at or below {@code low} the oldest
 * @param weights     how much each scorer counts, by name
 * @param throughputs the admin's speed table per workload class and card, and its minimum share
 * @param reserve     top-tier GPUs kept for high-priority pods
 * @param evictionFloor how much slower free cards a high-priority pod takes rather than preempt for faster ones
 * @param jobHeadroom the GPUs a job of several pods below high priority leaves free when it starts (and a pod of
 *                    several GPUs, behind a backlog of smaller pods)
 */
public record PolicySettings(PriorityThresholds thresholds, ScoreWeights weights, WorkloadThroughputs throughputs,
                             HighPriorityReserve reserve, EvictionFloor evictionFloor, JobHeadroom jobHeadroom) {

    public static final PolicySettings DEFAULTS = new PolicySettings(PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS,
            WorkloadThroughputs.NONE, HighPriorityReserve.NONE, EvictionFloor.NONE, JobHeadroom.NONE);

    public PolicySettings(PriorityThresholds thresholds, ScoreWeights weights, WorkloadThroughputs throughputs, HighPriorityReserve reserve) {
        this(thresholds, weights, throughputs, reserve, EvictionFloor.NONE, JobHeadroom.NONE);
    }

    public PolicySettings {
        Objects.requireNonNull(thresholds, "thresholds");
        Objects.requireNonNull(weights, "weights");
        Objects.requireNonNull(throughputs, "throughputs");
        Objects.requireNonNull(reserve, "reserve");
        Objects.requireNonNull(evictionFloor, "evictionFloor");
        Objects.requireNonNull(jobHeadroom, "jobHeadroom");
    }

    public PolicySettings withThresholds(PriorityThresholds newThresholds) {
        return new PolicySettings(newThresholds, weights, throughputs, reserve, evictionFloor, jobHeadroom);
    }

    public PolicySettings withWeights(ScoreWeights newWeights) {
        return new PolicySettings(thresholds, newWeights, throughputs, reserve, evictionFloor, jobHeadroom);
    }

    public PolicySettings withThroughputs(WorkloadThroughputs newThroughputs) {
        return new PolicySettings(thresholds, weights, newThroughputs, reserve, evictionFloor, jobHeadroom);
    }

    public PolicySettings withReserve(HighPriorityReserve newReserve) {
        return new PolicySettings(thresholds, weights, throughputs, newReserve, evictionFloor, jobHeadroom);
    }

    public PolicySettings withEvictionFloor(EvictionFloor newFloor) {
        return new PolicySettings(thresholds, weights, throughputs, reserve, newFloor, jobHeadroom);
    }

    public PolicySettings withJobHeadroom(JobHeadroom newHeadroom) {
        return new PolicySettings(thresholds, weights, throughputs, reserve, evictionFloor, newHeadroom);
    }
}
