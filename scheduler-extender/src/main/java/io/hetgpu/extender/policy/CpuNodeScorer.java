package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * Pods without GPUs belong on CPU nodes: a weighted preference, and a hard order on top of it (while a CPU node
 * is among the candidates, every GPU node scores below every CPU node, whatever locality says).
 */
public final class CpuNodeScorer implements NodeScorer {

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public int defaultWeight() {
        return 5;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (pod.needsGpus()) {
            return scores;
        }
        for (int i = 0; i < scores.length; i++) {
            scores[i] = candidates.get(i).node().isGpuNode() ? 0 : 1;
        }
        return scores;
    }

    @Override
    public ScoreOrder order(PodRequest pod, List<Candidate> candidates) {
        if (pod.needsGpus() || candidates.stream().allMatch(candidate -> candidate.node().isGpuNode())) {
            return ScoreOrder.NONE;
        }
        return (candidate, score) -> candidate.node().isGpuNode() ? 0 : Math.max(1, score);
    }
}
