package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * Card tier by priority: high-priority pods score the newest tier among the candidates highest,
 * low-priority pods the oldest tier that fits; neutral pods score every node the same.
 *
 * <p>When the admin gives a {@link WorkloadThroughputs} table and the pod names a class in it, the pod's
 * own speed on each candidate's cards decides instead: high-priority and neutral pods score the fastest
 * set highest, low-priority pods the oldest tier that fits; in both cases a set that is slower for this
 * pod than a set of an older or equal tier on another candidate scores 0, so a job never gets a newer
 * card it runs slower on.
 */
public final class TierScorer implements NodeScorer {

    private final PriorityThresholds thresholds;
    private final WorkloadThroughputs throughputs;

    public TierScorer(PriorityThresholds thresholds) {
        this(thresholds, WorkloadThroughputs.NONE);
    }

    public TierScorer(PriorityThresholds thresholds, WorkloadThroughputs throughputs) {
        this.thresholds = thresholds;
        this.throughputs = throughputs;
    }

    @Override
    public String name() {
        return "tier";
    }

    @Override
    public int defaultWeight() {
        return 4;
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context) {
        var preference = TierPreference.of(pod, thresholds);
        if (pod.needsGpus() && throughputs.knows(pod.workload())) {
            var speeds = speeds(pod, candidates);
            if (speeds != null) {
                return byThroughput(preference, candidates, speeds);
            }
        }
        var scores = new double[candidates.size()];
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

    /**
     * The pod's throughput on each candidate's set (its slowest card: synchronous training waits for it),
     * or null when the table lacks one of the cards, in which case tiers decide for every candidate alike.
     */
    private double[] speeds(PodRequest pod, List<Candidate> candidates) {
        var speeds = new double[candidates.size()];
        for (int i = 0; i < speeds.length; i++) {
            var candidate = candidates.get(i);
            var topology = candidate.node().gpus().topology();
            double slowest = Double.MAX_VALUE;
            for (int position : candidate.set().positions()) {
                slowest = Math.min(slowest, throughputs.of(pod.workload(), topology.device(position).model()));
            }
            if (!(slowest > 0) || slowest == Double.MAX_VALUE) {
                return null;
            }
            speeds[i] = slowest;
        }
        return speeds;
    }

    private static double[] byThroughput(GpuPreference preference, List<Candidate> candidates, double[] speeds) {
        var scores = new double[candidates.size()];
        double fastest = 0;
        int minRank = Integer.MAX_VALUE;
        int maxRank = Integer.MIN_VALUE;
        for (int i = 0; i < scores.length; i++) {
            fastest = Math.max(fastest, speeds[i]);
            minRank = Math.min(minRank, candidates.get(i).tierRank());
            maxRank = Math.max(maxRank, candidates.get(i).tierRank());
        }
        for (int i = 0; i < scores.length; i++) {
            if (dominated(i, candidates, speeds)) {
                continue;
            }
            if (preference == GpuPreference.OLDEST) {
                int rank = candidates.get(i).tierRank();
                scores[i] = maxRank == minRank ? 1 : 1 - (rank - minRank) / (double) (maxRank - minRank);
            } else {
                scores[i] = speeds[i] / fastest;
            }
        }
        return scores;
    }

    /** Another candidate of an older or equal tier runs the pod strictly faster. */
    private static boolean dominated(int i, List<Candidate> candidates, double[] speeds) {
        int rank = candidates.get(i).tierRank();
        for (int j = 0; j < speeds.length; j++) {
            if (j != i && candidates.get(j).tierRank() <= rank && speeds[j] > speeds[i]) {
                return true;
            }
        }
        return false;
    }
}
