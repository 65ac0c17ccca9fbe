package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/** Pods near their data: the mean closeness to the pod's located volumes (same node, then rack, then zone). */
public final class DataLocalityScorer implements NodeScorer {

    @Override
    public String name() {
        return "data";
    }

    @Override
    public int defaultWeight() {
        return 2;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        var volumes = context.volumes();
        if (volumes.isEmpty()) {
            return scores;
        }
        for (int i = 0; i < scores.length; i++) {
            double sum = 0;
            for (var volume : volumes) {
                sum += Proximity.to(candidates.get(i).node(), volume);
            }
            scores[i] = sum / volumes.size();
        }
        return scores;
    }
}
