package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.HashMap;
import java.util.List;

/**
 * GPU bin packing: a pod's GPUs go to the node left fullest once it has them, so that whole free nodes (and whole
 * NVLink islands on them) stay for the multi-GPU pods and gangs that need them. Without it kube-scheduler's default
 * spreading puts each one-GPU pod on the emptiest node, and on a busy cluster a pod that needs four GPUs on one node
 * waits until four happen to end at once on the same node.
 *
 * <p>Packing only orders candidates that the other preferences cannot tell apart: the same tier, a GPU set as well
 * linked, as close to the job's other pods and to its data. Within each such group the fullest candidate scores 1 and
 * the emptiest 0; since every group's fullest scores 1, packing never decides between groups, so it never trades a
 * newer card, a better NVLink set or a worker's closeness to its job for a fuller node. It says nothing for pods
 * without GPUs.
 */
public final class PackingScorer implements NodeScorer {

    private final JobLocalityScorer jobLocality = new JobLocalityScorer();
    private final DataLocalityScorer dataLocality = new DataLocalityScorer();

    @Override
    public String name() {
        return "packing";
    }

    @Override
    public int defaultWeight() {
        return 2;
    }

    /** What the other preferences see of a candidate: candidates alike in all of it form one group. */
    private record Group(int tierRank, long linkScore, double closenessToJob, double closenessToData) {
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var scores = new double[candidates.size()];
        if (!pod.needsGpus()) {
            return scores;
        }
        var toJob = jobLocality.score(pod, candidates, context);
        var toData = dataLocality.score(pod, candidates, context);
        var groups = new Group[scores.length];
        var fullest = new HashMap<Group, Double>();
        var emptiest = new HashMap<Group, Double>();
        for (int i = 0; i < scores.length; i++) {
            var candidate = candidates.get(i);
            groups[i] = new Group(candidate.tierRank(), candidate.set().linkScore(), toJob[i], toData[i]);
            scores[i] = takenAfter(candidate);
            fullest.merge(groups[i], scores[i], Math::max);
            emptiest.merge(groups[i], scores[i], Math::min);
        }
        for (int i = 0; i < scores.length; i++) {
            double high = fullest.get(groups[i]);
            double low = emptiest.get(groups[i]);
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
