package io.hetgpu.extender.policy;

import static io.hetgpu.extender.policy.ScorersTest.score;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.throughput.LearnedTable;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.extender.throughput.WorkSample;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The policy reading learned speeds: through its source on every request, priors explored by low-priority pods only. */
class LearnedSpeedPolicyTest {

    private final NodeState k80 = TestNodes.gpu("k80", TestTopologies::k80x4);
    private final NodeState t4 = TestNodes.gpu("t4", TestTopologies::t4x4);
    private final NodeState v100 = TestNodes.gpu("v100", TestTopologies::dgx1V100);

    /** Recommendation-like: measured far faster on K80 than on V100, so T4's prior (from both) is below K80's figure. */
    private static final WorkloadThroughputs MEASURED_ON_K80_AND_V100 = new WorkloadThroughputs(
            Map.of("rec", Map.of("K80", 20.0, "V100", 2.0, "T4", 8.98)), 0, Map.of("rec", Set.of("T4")));

    private static PodRequest pod(String workload, int priority) {
        return TestPods.priority(TestPods.gpus(1), priority, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload(workload);
    }

    private static ThroughputSource source(WorkloadThroughputs table, boolean explore) {
        var snapshot = new ThroughputSource.Snapshot(1, table, LearnedTable.EMPTY, explore);
        return () -> snapshot;
    }

    @Test
    void aLowPriorityPodExploresACardItsClassHasOnlyAPriorFor() {
        var exploring = new TierScorer(PriorityThresholds.DEFAULTS, source(MEASURED_ON_K80_AND_V100, true));
        var notExploring = new TierScorer(PriorityThresholds.DEFAULTS, source(MEASURED_ON_K80_AND_V100, false));
        // Without exploring, T4 is dominated by the older K80 that runs the class faster: 0. Exploring, it is ranked by tier.
        assertThat(score(notExploring, pod("rec", -10), k80, t4, v100)).containsExactly(1.0, 0.0, 0.0);
        assertThat(score(exploring, pod("rec", -10), k80, t4, v100)).containsExactly(1.0, 0.3333, 0.0);
    }

    @Test
    void highPriorityAndNeutralPodsNeverExplore() {
        var exploring = new TierScorer(PriorityThresholds.DEFAULTS, source(MEASURED_ON_K80_AND_V100, true));
        assertThat(score(exploring, pod("rec", 5000), k80, t4, v100)).containsExactly(1.0, 0.0, 0.0);
        assertThat(score(exploring, pod("rec", 500), k80, t4, v100)).containsExactly(1.0, 0.0, 0.0);
    }

    @Test
    void aPriorNeverKeepsAPodOffACardNorSetsTheSpeedOthersAreJudgedBy() {
        // Measured on V100 alone; H100's prior is 4.5 times as fast. A floor of 50 % judges by measured figures only.
        var table = new WorkloadThroughputs(Map.of("bert", Map.of("V100", 10.0, "K80", 1.5, "H100", 45.0)), 0.5,
                Map.of("bert", Set.of("K80", "H100")));
        assertThat(table.tooSlow("bert", "V100")).isFalse();
        assertThat(table.tooSlow("bert", "K80")).as("a prior is never too slow").isFalse();
        assertThat(table.fastestKnownCard("bert")).isEqualTo("V100");
        var measuredSlow = new WorkloadThroughputs(Map.of("bert", Map.of("V100", 10.0, "K80", 1.5)), 0.5);
        assertThat(measuredSlow.tooSlow("bert", "K80")).isTrue();
    }

    @Test
    void aNewLearnedTableChangesTheRankingWithoutANewPolicy() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS, ThroughputSource.learning(learner, WorkloadThroughputs.NONE));
        var neutral = pod("rec", 500);
        var before = PolicyAnswers.prioritize(policy, neutral, List.of(k80, v100), io.hetgpu.extender.model.PlacementContext.EMPTY);
        for (int i = 0; i < 3; i++) {
            learner.observe(new WorkSample("rec", "team-a", "K80", 1, 600, 600 * 20.0, Instant.EPOCH));
            learner.observe(new WorkSample("rec", "team-a", "V100", 1, 600, 600 * 2.0, Instant.EPOCH));
        }
        var after = PolicyAnswers.prioritize(policy, neutral, List.of(k80, v100), io.hetgpu.extender.model.PlacementContext.EMPTY);
        assertThat(tier(before)).as("unknown class: tiers, tier-neutral").isEqualTo(Map.of("k80", 0.0, "v100", 0.0));
        assertThat(tier(after)).as("learned: K80 runs it ten times faster").isEqualTo(Map.of("k80", 1.0, "v100", 0.0));
    }

    private static Map<String, Double> tier(ScoreTable table) {
        int column = table.scorers().indexOf("tier");
        var result = new java.util.TreeMap<String, Double>();
        table.rows().forEach(row -> result.put(row.node(), row.parts()[column]));
        return result;
    }
}
