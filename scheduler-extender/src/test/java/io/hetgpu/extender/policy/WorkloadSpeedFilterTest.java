package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Gavel's measured single-GPU steps/s (OSDI 2020): ResNet-50 runs at 10 % of its V100 speed on a K80. */
class WorkloadSpeedFilterTest {

    private static final WorkloadThroughputs GAVEL = new WorkloadThroughputs(Map.of(
            "resnet50", Map.of("K80", 1.81, "V100", 17.99),
            "recommendation", Map.of("K80", 20.05, "V100", 13.28)));

    private final NodeState k80 = TestNodes.gpu("k80", TestTopologies::k80x4);
    private final NodeState v100 = TestNodes.gpu("v100", TestTopologies::dgx1V100);

    private static PodRequest pod(String workload) {
        return TestPods.priority(TestPods.gpus(1), 5000, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload(workload);
    }

    private static PlacementPolicy policy(double share) {
        return new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(GAVEL.withMinimumShare(share)));
    }

    @Test
    void aCardBelowTheShareIsRefusedForGoodWithTheSpeedsInTheReason() {
        var outcome = PolicyAnswers.filter(policy(0.25), pod("resnet50"), List.of(k80, v100));
        assertThat(outcome.fitting()).containsExactly("v100");
        assertThat(outcome.failed()).isEmpty();
        assertThat(outcome.unresolvable()).containsOnlyKeys("k80");
        assertThat(outcome.unresolvable().get("k80")).endsWith("pod needs cards running workload resnet50 at 25 % or more of its V100 speed (17.99 per GPU-second)");
    }

    @Test
    void theFastestCardIsTheClassesOwnNotTheNewest() {
        // Recommendation's best card is the K80; its V100 speed is 66 % of that.
        assertThat(PolicyAnswers.filter(policy(0.7), pod("recommendation"), List.of(k80, v100)).fitting()).containsExactly("k80");
        assertThat(PolicyAnswers.filter(policy(0.6), pod("recommendation"), List.of(k80, v100)).fitting()).containsExactly("k80", "v100");
    }

    @Test
    void offByDefaultAndSilentForPodsItKnowsNothingAbout() {
        assertThat(PolicyAnswers.filter(policy(0), pod("resnet50"), List.of(k80, v100)).fitting()).containsExactly("k80", "v100");
        assertThat(PolicyAnswers.filter(policy(0.25), pod("bert"), List.of(k80, v100)).fitting()).containsExactly("k80", "v100");
        assertThat(PolicyAnswers.filter(policy(0.25), TestPods.gpus(1), List.of(k80, v100)).fitting()).containsExactly("k80", "v100");
        var h100 = TestNodes.gpu("h100", TestTopologies::dgxH100);
        assertThat(PolicyAnswers.filter(policy(0.25), pod("resnet50"), List.of(h100)).fitting())
                .as("a card the table does not list is not judged").containsExactly("h100");
    }

    @Test
    void theConfigFileSetsTheShareAndRefusesNonsense() throws Exception {
        var config = ExtenderConfig.parse("""
                version: v1
                policy:
                  workloads:
                    resnet50: {K80: 1.81, V100: 17.99}
                  minimumSpeedShare: 0.3
                """, "c.yaml");
        assertThat(config.workloads().minimumShare()).isEqualTo(0.3);
        assertThat(config.workloads().tooSlow("ResNet50", "K80")).isTrue();
        assertThat(ExtenderConfig.DEFAULTS.workloads().minimumShare()).as("as shipped").isEqualTo(0.3);
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {workloads: {resnet50: {V100: 1}}, minimumSpeedShare: 1.5}", "c.yaml"))
                .hasMessage("c.yaml: policy.minimumSpeedShare: expected at least 0 and below 1, got 1.5");
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {minimumSpeedShare: 0.2, learning: {enabled: false}}", "c.yaml").workloads())
                .as("the shipped file's share stays valid with learning off: it compares nothing").isEqualTo(WorkloadThroughputs.NONE.withMinimumShare(0.2));
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {minimumSpeedShare: 0.3}", "c.yaml").workloads().minimumShare())
                .as("learning fills the table the share compares with").isEqualTo(0.3);
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {workloads: {resnet50: {V100: 1}}, minimumSpeedShare: lots}", "c.yaml"))
                .hasMessage("c.yaml: policy.minimumSpeedShare: expected a number, got \"lots\"");
    }
}
