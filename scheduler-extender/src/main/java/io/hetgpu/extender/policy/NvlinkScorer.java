package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * How well connected the GPU set a node would give is: the shared allocator's link score, relative to
 * the best set any candidate offers. Says nothing for pods of fewer than two GPUs. A node whose links are
 * unknown (served neither by hetgpu's device plugin nor by its DRA driver) scores 0, not as well as any set whose links
 * are known. A node of hetgpu's DRA driver has its links from the NVLink sets it publishes ({@code DraLinks}): ranked by
 * set size, not measured.
 */
public final class NvlinkScorer implements NodeScorer {

    @Override
    public String name() {
        return "nvlink";
    }

    @Override
    public int defaultWeight() {
        return 3;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (pod.gpuCount() < 2) {
            return scores;
        }
        long best = 0;
        for (var candidate : candidates) {
            if (candidate.linksKnown()) {
                best = Math.max(best, candidate.linkScore());
            }
        }
        if (best == 0) {
            return scores;
        }
        for (int i = 0; i < scores.length; i++) {
            var candidate = candidates.get(i);
            // Unknown links score 0, as the worst: a set hetgpu measured as NVLink is worth more than a guess.
            scores[i] = candidate.linksKnown() ? candidate.linkScore() / (double) best : 0;
        }
        return scores;
    }
}
