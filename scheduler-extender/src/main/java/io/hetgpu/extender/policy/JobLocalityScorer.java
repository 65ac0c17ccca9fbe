package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * Pods of one job together: the mean closeness to the job's other pods (same node, then rack, then zone), a pod still
 * waiting counted on the node when there is room for it there ({@link JobCloseness}).
 */
public final class JobLocalityScorer implements NodeScorer {

    @Override
    public String name() {
        return "job";
    }

    @Override
    public int defaultWeight() {
        return 3;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (!context.hasJob()) {
            return scores;
        }
        var closeness = JobCloseness.of(context);
        for (int i = 0; i < scores.length; i++) {
            scores[i] = closeness.of(candidates.get(i));
        }
        return scores;
    }
}
