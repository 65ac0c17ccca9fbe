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
 */
public record PolicySettings(PriorityThresholds thresholds, ScoreWeights weights, WorkloadThroughputs throughputs,
                             HighPriorityReserve reserve, EvictionFloor evictionFloor) {

    public static final PolicySettings DEFAULTS = new PolicySettings(PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS,
            WorkloadThroughputs.NONE, HighPriorityReserve.NONE, EvictionFloor.NONE);

    public PolicySettings(PriorityThresholds thresholds, ScoreWeights weights, WorkloadThroughputs throughputs, HighPriorityReserve reserve) {
        this(thresholds, weights, throughputs, reserve, EvictionFloor.NONE);
    }

    public PolicySettings {
        Objects.requireNonNull(thresholds, "thresholds");
        Objects.requireNonNull(weights, "weights");
        Objects.requireNonNull(throughputs, "throughputs");
        Objects.requireNonNull(reserve, "reserve");
        Objects.requireNonNull(evictionFloor, "evictionFloor");
    }

    public PolicySettings withThresholds(PriorityThresholds newThresholds) {
        return new PolicySettings(newThresholds, weights, throughputs, reserve, evictionFloor);
    }

    public PolicySettings withWeights(ScoreWeights newWeights) {
        return new PolicySettings(thresholds, newWeights, throughputs, reserve, evictionFloor);
    }

    public PolicySettings withThroughputs(WorkloadThroughputs newThroughputs) {
        return new PolicySettings(thresholds, weights, newThroughputs, reserve, evictionFloor);
    }

    public PolicySettings withReserve(HighPriorityReserve newReserve) {
        return new PolicySettings(thresholds, weights, throughputs, newReserve, evictionFloor);
    }

    public PolicySettings withEvictionFloor(EvictionFloor newFloor) {
        return new PolicySettings(thresholds, weights, throughputs, reserve, newFloor);
    }
}
