package io.hetgpu.extender.policy;

import static io.hetgpu.extender.policy.ScorersTest.score;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Workload-aware cards: Gavel's measured steps/s (OSDI 2020) for two of its jobs on K80 and V100. */
class WorkloadAwareTierTest {

    private static final WorkloadThroughputs GAVEL = new WorkloadThroughputs(Map.of(
            "recommendation", Map.of("K80", 20.05, "V100", 13.28),
            "ResNet50", Map.of("Tesla K80", 1.81, "V100", 17.99)));

    private final NodeState k80 = TestNodes.gpu("k80", TestTopologies::k80x4);
    private final NodeState v100 = TestNodes.gpu("v100", TestTopologies::dgx1V100);
    private final TierScorer scorer = new TierScorer(PriorityThresholds.DEFAULTS, GAVEL);

    private static PodRequest pod(String workload, int priority) {
        return TestPods.priority(TestPods.gpus(1), priority, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload(workload);
    }

    @Test
    void aHighPriorityJobThatRunsSlowerOnTheNewerCardDoesNotGetIt() {
        assertThat(score(scorer, pod("recommendation", 5000), k80, v100)).containsExactly(1.0, 0.0);
    }

    @Test
    void aHighPriorityJobThatRunsFasterOnTheNewerCardGetsItByItsOwnSpeedRatio() {
        assertThat(score(scorer, pod("resnet50", 5000), k80, v100)).containsExactly(0.1006, 1.0);
    }

    @Test
    void aLowPriorityJobStillLeavesTheNewestCardsFreeButNeverTakesASlowerNewerOne() {
        assertThat(score(scorer, pod("resnet50", -10), k80, v100)).containsExactly(1.0, 0.0);
        assertThat(score(scorer, pod("recommendation", -10), k80, v100)).containsExactly(1.0, 0.0);
    }

    @Test
    void aNeutralJobWithAKnownWorkloadGoesWhereItRunsFastest() {
        assertThat(score(scorer, pod("recommendation", 500), k80, v100)).containsExactly(1.0, 0.0);
        assertThat(score(new TierScorer(PriorityThresholds.DEFAULTS), pod("recommendation", 500), k80, v100))
                .containsExactly(0.0, 0.0);
    }

    @Test
    void withoutATableAnUnknownClassOrAnUnlistedCardTiersDecide() {
        var plainTiers = new TierScorer(PriorityThresholds.DEFAULTS);
        assertThat(score(plainTiers, pod("recommendation", 5000), k80, v100)).containsExactly(0.0, 1.0);
        assertThat(score(scorer, pod("bert", 5000), k80, v100)).containsExactly(0.0, 1.0);
        var h100 = TestNodes.gpu("h100", TestTopologies::dgxH100);
        assertThat(score(scorer, pod("recommendation", 5000), k80, v100, h100)).containsExactly(0.0, 0.4, 1.0);
    }

    @Test
    void thePolicyPlacesARecommendationJobOnTheOlderFasterCard() {
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(GAVEL));
        var table = PolicyAnswers.prioritize(policy, pod("recommendation", 5000), List.of(v100, k80), PlacementContext.EMPTY);
        assertThat(table.ranked().getFirst().node()).isEqualTo("k80");
        var shipped = new PlacementPolicy(PolicySettings.DEFAULTS);
        assertThat(PolicyAnswers.prioritize(shipped, pod("recommendation", 5000), List.of(v100, k80), PlacementContext.EMPTY)
                .ranked().getFirst().node()).isEqualTo("v100");
    }

    @Test
    void theConfigFileCarriesTheTableAndRefusesABadThroughput() throws Exception {
        var config = ExtenderConfig.parse("""
                version: v1
                policy:
                  workloads:
                    recommendation: {K80: 20.05, P100: 30.74, V100: 13.28}
                """, "c.yaml");
        assertThat(config.workloads().of("Recommendation", "V100")).isEqualTo(13.28);
        assertThat(ExtenderConfig.DEFAULTS.workloads().isEmpty()).isTrue();
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {workloads: {recommendation: {V100: -1}}}", "c.yaml"))
                .hasMessage("c.yaml: policy.workloads.recommendation.V100: expected a throughput above 0, got -1.0");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {workloads: {recommendation: {V100: fast}}}", "c.yaml"))
                .hasMessageContaining("policy.workloads.recommendation.V100");
    }
}
