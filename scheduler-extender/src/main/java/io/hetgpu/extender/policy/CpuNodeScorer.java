package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * Pods without GPUs belong on CPU nodes. {@link PlacementPolicy} also makes this a hard ordering: while
 * a CPU node is among the candidates, every GPU node scores below every CPU node.
 */
public final class CpuNodeScorer implements NodeScorer {

    @Override
    public String name() {
        return "cpu";
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
}
