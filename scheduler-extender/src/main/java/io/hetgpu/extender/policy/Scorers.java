package io.hetgpu.extender.policy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every scorer hetgpu ranks nodes with, in the order their columns appear in score tables. A new scorer is its
 * own class plus one entry here; its name and default weight come from the class, and the configuration's
 * {@code policy.weights} is checked against these names.
 */
final class Scorers {

    private Scorers() {
    }

    static List<NodeScorer> all(PriorityThresholds thresholds, WorkloadThroughputs throughputs) {
        return List.of(new TierScorer(thresholds, throughputs), new NvlinkScorer(), new JobLocalityScorer(),
                new DataLocalityScorer(), new CpuNodeScorer());
    }

    /** Each registered scorer's name and default weight, in registration order. */
    static Map<String, Integer> defaultWeights() {
        var weights = new LinkedHashMap<String, Integer>();
        all(PriorityThresholds.DEFAULTS, WorkloadThroughputs.NONE).forEach(scorer -> weights.put(scorer.name(), scorer.defaultWeight()));
        return weights;
    }
}
