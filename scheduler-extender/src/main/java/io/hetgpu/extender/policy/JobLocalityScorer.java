package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/** Pods of one job together: the mean closeness to the job's other pods (same node, then rack, then zone). */
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
        var peers = context.peers();
        if (peers.isEmpty()) {
            return scores;
        }
        for (int i = 0; i < scores.length; i++) {
            scores[i] = Proximity.toPeers(candidates.get(i).node(), peers);
        }
        return scores;
    }
}
