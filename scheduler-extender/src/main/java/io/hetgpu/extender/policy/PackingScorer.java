package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.HashMap;
import java.util.List;

/**
 * GPU bin packing: a pod's GPUs go to the node left fullest once it has them, so that whole free nodes (and whole
 * NVLink islands on them) stay for the multi-GPU pods and gangs that need them. Without it kube-scheduler's default
 * spreading puts each one-GPU pod on the emptiest node, and on a busy cluster a pod that needs four GPUs on one node
 * waits until four happen to end at once on the same node: on the Gavel trace its low-priority 8-GPU jobs (two 4-GPU
 * workers) waited thousands of hours. Scores are relative among the candidates of one tier: there the fullest 1, the
 * emptiest 0. Since every tier's fullest candidate scores 1, packing does not change which tier a pod's best node is
 * of (the tier rule decides that); it orders the nodes within each tier. It says nothing for pods without GPUs.
 */
public final class PackingScorer implements NodeScorer {

    @Override
    public String name() {
        return "packing";
    }

    @Override
    public int defaultWeight() {
        return 2;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (!pod.needsGpus()) {
            return scores;
        }
        // Per tier: the fullest and the emptiest share taken among the candidates of that tier.
        var fullest = new HashMap<Integer, Double>();
        var emptiest = new HashMap<Integer, Double>();
        for (int i = 0; i < scores.length; i++) {
            scores[i] = takenAfter(candidates.get(i));
            fullest.merge(candidates.get(i).tierRank(), scores[i], Math::max);
            emptiest.merge(candidates.get(i).tierRank(), scores[i], Math::min);
        }
        for (int i = 0; i < scores.length; i++) {
            double high = fullest.get(candidates.get(i).tierRank());
            double low = emptiest.get(candidates.get(i).tierRank());
            scores[i] = high == low ? 1 : (scores[i] - low) / (high - low);
        }
        return scores;
    }

    /** The share of the node's GPUs that no pod could be given once this one holds its set. */
    private static double takenAfter(Candidate candidate) {
        var node = candidate.node();
        int size = node.gpus().size();
        return size == 0 ? 0 : (size - node.freeCount() + candidate.set().size()) / (double) size;
    }
}
