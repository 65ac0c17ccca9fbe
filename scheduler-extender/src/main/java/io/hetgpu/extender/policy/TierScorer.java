package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.throughput.ThroughputSource;
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
 *
 * <p>Exploration: where the class's figure on a candidate's cards is only a prior (it has never run there) and
 * learning explores, a low-priority pod does not count that candidate as dominated: it may take it by tier like any
 * other, and its run measures the class there. Low-priority work pays for exploring; high-priority and neutral pods
 * trust the prior as a figure and never explore (priors follow the card table's tier order, so for them an unmeasured
 * card ranks as its tier would beside the class's measured ones).
 *
 * <p>On nodes a DRA driver serves, a pod of several GPUs ranked by tier is ranked by generation, then set, then tier, as
 * hetgpu's claims list them ({@link CardThenSet}); the {@link NvlinkScorer} then follows this column.
 */
public final class TierScorer implements NodeScorer {

    private final PriorityThresholds thresholds;
    /** Read once per request: the learned table changes while the scorer lives. */
    private final ThroughputSource source;

    public TierScorer(PriorityThresholds thresholds) {
        this(thresholds, WorkloadThroughputs.NONE);
    }

    public TierScorer(PriorityThresholds thresholds, WorkloadThroughputs throughputs) {
        this(thresholds, ThroughputSource.fixed(throughputs));
    }

    public TierScorer(PriorityThresholds thresholds, ThroughputSource source) {
        this.thresholds = thresholds;
        this.source = source;
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
        var snapshot = source.current();
        var throughputs = snapshot.table();
        if (pod.needsGpus() && throughputs.knows(pod.workload())) {
            var speeds = speeds(pod, candidates, throughputs);
            if (speeds != null) {
                var explored = preference == GpuPreference.OLDEST && snapshot.explore() ? unexplored(pod, candidates, throughputs) : null;
                return byThroughput(preference, candidates, speeds, explored);
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
        if (CardThenSet.applies(pod, preference, throughputs, candidates)) {
            return CardThenSet.scores(preference, candidates, scores, NvlinkScorer.linkShares(candidates));
        }
        return scores;
    }

    /**
     * The pod's throughput on each candidate's set (its slowest card: synchronous training waits for it),
     * or null when the table lacks one of the cards, in which case tiers decide for every candidate alike.
     */
    private static double[] speeds(PodRequest pod, List<Candidate> candidates, WorkloadThroughputs throughputs) {
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

    /** Per candidate: whether a card of its set has only a prior figure for the class (it never ran there). */
    static boolean[] unexplored(PodRequest pod, List<Candidate> candidates, WorkloadThroughputs throughputs) {
        var result = new boolean[candidates.size()];
        for (int i = 0; i < result.length; i++) {
            var candidate = candidates.get(i);
            var topology = candidate.node().gpus().topology();
            for (int position : candidate.set().positions()) {
                if (throughputs.isPrior(pod.workload(), topology.device(position).model())) {
                    result[i] = true;
                    break;
                }
            }
        }
        return result;
    }

    /** @param explored candidates a low-priority pod explores (never dominated), or null */
    private static double[] byThroughput(GpuPreference preference, List<Candidate> candidates, double[] speeds, boolean[] explored) {
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
            if ((explored == null || !explored[i]) && dominated(i, candidates, speeds)) {
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
