package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.explain.LearnedSpeedWords;
import io.hetgpu.extender.explain.PodSpeeds;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.extender.throughput.WorkSample;
import io.hetgpu.extender.throughput.LearnedTable;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import java.time.Instant;
import java.util.ArrayList;
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
        assertThat(outcome.unresolvable().get("k80")).isEqualTo(
                "node has 4 K80 (11 GiB, cc 3.7): resnet50 runs at 0.1 of its V100 speed on K80 (admin's table; V100: admin's table;"
                        + " minimumSpeedShare 0.25)");
    }

    /** The filter's reason for kube-scheduler in the words of the Event and of explain (LearnedSpeedWords.tooSlow). */
    @Test
    void aCardRefusedForALearnedSpeedIsSaidWithTheFiguresAndTheRunsTheyRestOn() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var end = Instant.parse("2026-11-28T04:00:00Z");
        for (int i = 0; i < 14; i++) {
            learner.observe(new WorkSample("resnet50", "team-a", "V100", 1, 600, 600 * 100.0, end));
        }
        for (int i = 0; i < 9; i++) {
            learner.observe(new WorkSample("resnet50", "team-a", "K80", 1, 600, 600 * 12.0, end));
        }
        var source = ThroughputSource.learning(learner, WorkloadThroughputs.NONE.withMinimumShare(0.3));
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS, source);
        var t4 = TestNodes.gpu("t4", TestTopologies::t4x4);

        var outcome = PolicyAnswers.filter(policy, pod("resnet50"), List.of(k80, v100, t4));

        assertThat(outcome.unresolvable().get("k80"))
                .isEqualTo("node has 4 K80 (11 GiB, cc 3.7): resnet50 runs at 0.12 of its V100 speed on K80 (learned, 9 runs; minimumSpeedShare 0.3)");
        assertThat(outcome.fitting()).as("T4's figure is a prior: it keeps no pod off").containsExactly("v100", "t4");
        assertThat(outcome.unresolvable().get("k80")).isEqualTo(LearnedSpeedWords.tooSlow("resnet50",
                new PodSpeeds.Figure("K80", 12, 9, PodSpeeds.Source.LEARNED), new PodSpeeds.Figure("V100", 100, 14, PodSpeeds.Source.LEARNED), 0.3)
                .transform(words -> "node has 4 K80 (11 GiB, cc 3.7): " + words));
    }

    @Test
    void onANodeOfSeveralCardsTooSlowTheReasonNamesTheOneClosestToTheShare() {
        var table = new WorkloadThroughputs(Map.of("resnet50", Map.of("K80", 1.0, "T4", 4.0, "V100", 20.0)), 0.3, Map.of());
        var snapshot = new ThroughputSource.Snapshot(0, table, LearnedTable.EMPTY);
        var mixed = TestNodes.gpu("mixed", WorkloadSpeedFilterTest::twoK80TwoT4);

        assertThat(WorkloadSpeedFilter.check(GpuFit.of(pod("resnet50"), mixed, -1L), snapshot)).isEqualTo(Verdict.unresolvable(
                "node has 2 K80 (11 GiB, cc 3.7) + 2 T4 (15 GiB, cc 7.5): resnet50 runs at 0.2 of its V100 speed on T4 (admin's table;"
                        + " V100: admin's table; minimumSpeedShare 0.3)"));
        assertThat(WorkloadSpeedFilter.check(GpuFit.of(pod("resnet50"), mixed, -1L), new ThroughputSource.Snapshot(0,
                table.withMinimumShare(0.2), LearnedTable.EMPTY))).as("T4 at the share").isEqualTo(Verdict.FITS);
    }

    /** Two K80s and two T4s in one node. */
    private static NodeTopology twoK80TwoT4(String node) {
        var k80s = TestTopologies.k80x4(node).devices();
        var t4s = TestTopologies.t4x4(node).devices();
        var devices = new ArrayList<GpuDevice>();
        for (int i = 0; i < 4; i++) {
            var d = i < 2 ? k80s.get(i) : t4s.get(i);
            devices.add(new GpuDevice(d.uuid(), i, d.product(), d.model(), d.family(), d.computeCapability(), d.memoryMiB(), d.pciBusId(),
                    d.numaNode(), d.health()));
        }
        return new NodeTopology("470.82.01", "11.4", devices, LinkMatrix.builder(4, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS)).build());
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
