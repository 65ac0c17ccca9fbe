package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.List;
import java.util.function.Function;

/**
 * How well connected the GPU set a node would give is: the shared allocator's link score, relative to
 * the best set any candidate offers. Says nothing for pods of fewer than two GPUs. A node whose links are
 * unknown (served neither by hetgpu's device plugin nor by its DRA driver) scores 0, not as well as any set whose links
 * are known. A node of hetgpu's DRA driver has its links from the NVLink sets it publishes ({@code DraLinks}): ranked by
 * set size, not measured.
 *
 * <p>Where the tier scorer ranks the pod's candidates by generation, then set ({@link CardThenSet}: nodes a DRA driver
 * serves), this scorer gives that same column: the set counts within the generation, with its own weight, and never
 * outweighs a generation.
 */
public final class NvlinkScorer implements NodeScorer {

    private final PriorityThresholds thresholds;
    private final ThroughputSource throughputs;

    /** Links alone, for pods of no tier preference and tests of the links. */
    public NvlinkScorer() {
        this(PriorityThresholds.DEFAULTS, ThroughputSource.fixed(WorkloadThroughputs.NONE));
    }

    /** As the tier scorer built with the same thresholds and table ranks. */
    public NvlinkScorer(PriorityThresholds thresholds, ThroughputSource throughputs) {
        this.thresholds = thresholds;
        this.throughputs = throughputs;
    }

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
        return pod.gpuCount() < 2 ? new double[candidates.size()] : linkShares(candidates);
    }

    @Override
    public double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context, Function<String, double[]> earlier) {
        var cardThenSet = earlier.apply("tier");
        // The table is read again here, as the filters and the tier scorer each read it: only a class learned between the
        // two reads of one request could make them differ, and then only for that one answer.
        if (cardThenSet != null && CardThenSet.applies(pod, TierPreference.of(pod, thresholds), throughputs.current().table(), candidates)) {
            return cardThenSet.clone();
        }
        return score(pod, candidates, context);
    }

    /**
     * Each candidate's link score relative to the best known one, 0..1; all 0 when no candidate's links are known. Unknown
     * links score 0, as the worst: a set hetgpu measured as NVLink is worth more than a guess.
     */
    static double[] linkShares(List<Candidate> candidates) {
        var shares = new double[candidates.size()];
        long best = 0;
        for (var candidate : candidates) {
            if (candidate.linksKnown()) {
                best = Math.max(best, candidate.linkScore());
            }
        }
        if (best == 0) {
            return shares;
        }
        for (int i = 0; i < shares.length; i++) {
            var candidate = candidates.get(i);
            shares[i] = candidate.linksKnown() ? candidate.linkScore() / (double) best : 0;
        }
        return shares;
    }
}
