package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * How well connected the GPU set a node would give is: the shared allocator's link score, relative to
 * the best set any candidate offers. Says nothing for pods of fewer than two GPUs.
 */
public final class NvlinkScorer implements NodeScorer {

    @Override
    public String name() {
        return "nvlink";
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (pod.gpuCount() < 2) {
            return scores;
        }
        long best = 0;
        for (var candidate : candidates) {
            best = Math.max(best, candidate.set().linkScore());
        }
        if (best == 0) {
            return scores;
        }
        for (int i = 0; i < scores.length; i++) {
            scores[i] = candidates.get(i).set().linkScore() / (double) best;
        }
        return scores;
    }
}
