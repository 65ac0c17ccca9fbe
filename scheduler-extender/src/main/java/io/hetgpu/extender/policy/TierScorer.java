package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * Card tier by priority: high-priority pods score the newest tier among the candidates highest,
 * low-priority pods the oldest tier that fits; neutral pods score every node the same.
 */
public final class TierScorer implements NodeScorer {

    private final PriorityThresholds thresholds;

    public TierScorer(PriorityThresholds thresholds) {
        this.thresholds = thresholds;
    }

    @Override
    public String name() {
        return "tier";
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        var preference = TierPreference.of(pod, thresholds);
        if (!pod.needsGpus() || preference == GpuPreference.ANY) {
            return scores;
        }
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        for (var candidate : candidates) {
            min = Math.min(min, candidate.tierRank());
            max = Math.max(max, candidate.tierRank());
        }
        for (int i = 0; i < scores.length; i++) {
            double position = max == min ? 1 : (candidates.get(i).tierRank() - min) / (double) (max - min);
            scores[i] = preference == GpuPreference.NEWEST ? position : max == min ? 1 : 1 - position;
        }
        return scores;
    }
}
