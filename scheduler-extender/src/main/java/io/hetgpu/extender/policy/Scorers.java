package io.hetgpu.extender.policy;

import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.Collections;
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

    static List<NodeScorer> all(PriorityThresholds thresholds, ThroughputSource throughputs) {
        return List.of(new TierScorer(thresholds, throughputs), new NvlinkScorer(thresholds, throughputs), new JobLocalityScorer(),
                new DataLocalityScorer(), new CpuNodeScorer(), new PackingScorer());
    }

    /** Read once: every weight check asks, and the registry does not change while the program runs. */
    private static final Map<String, Integer> DEFAULT_WEIGHTS = readDefaultWeights();

    /** Each registered scorer's name and default weight, in registration order (unmodifiable). */
    static Map<String, Integer> defaultWeights() {
        return DEFAULT_WEIGHTS;
    }

    private static Map<String, Integer> readDefaultWeights() {
        var weights = new LinkedHashMap<String, Integer>();
        all(PriorityThresholds.DEFAULTS, ThroughputSource.fixed(WorkloadThroughputs.NONE)).forEach(scorer -> weights.put(scorer.name(), scorer.defaultWeight()));
        return Collections.unmodifiableMap(weights);
    }
}
