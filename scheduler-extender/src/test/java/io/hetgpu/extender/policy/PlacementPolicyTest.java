package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlacementPolicyTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    @Test
    void filterSortsNodesIntoFittingRetryableAndUnresolvable() {
        var pod = TestPods.nvlink(TestPods.gpus(4));
        var nodes = List.of(
                TestNodes.gpu("dgx", TestTopologies::dgx1V100),
                TestNodes.gpu("dgx-busy", TestTopologies::dgx1V100, 0, 5),
                TestNodes.gpu("t4", TestTopologies::t4x4),
                TestNodes.cpu("cpu"));

        var outcome = PolicyAnswers.filter(policy, pod, nodes);

        assertThat(outcome.fitting()).containsExactly("dgx");
        assertThat(outcome.failed()).isEqualTo(Map.of("dgx-busy", "2 free V100, pod needs 4"));
        assertThat(outcome.unresolvable()).isEqualTo(Map.of(
                "t4", "node has no NVLink-connected set of 4 among 4 T4 (15 GiB, cc 7.5)",
                "cpu", "node has no GPUs, pod needs 4"));
    }

    @Test
    void filterIsIdempotent() {
        var pod = TestPods.gpus(2);
        var nodes = List.of(TestNodes.gpu("dgx", TestTopologies::dgx1V100, 0, 1), TestNodes.gpu("t4", TestTopologies::t4x4, 3));
        assertThat(PolicyAnswers.filter(policy, pod, nodes)).isEqualTo(PolicyAnswers.filter(policy, pod, nodes));
    }

    @Test
    void highPriorityTrainingLandsOnTheNewestCardsAndLowPriorityOnTheOldest() {
        var nodes = List.of(TestNodes.gpu("k80", TestTopologies::k80x4), TestNodes.gpu("v100", TestTopologies::dgx1V100),
                TestNodes.gpu("h100", TestTopologies::dgxH100));
        var high = TestPods.priority(TestPods.gpus(2), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var low = TestPods.priority(TestPods.gpus(2), -100, PriorityHint.UNSET, GpuPreference.UNSET);
        var unclassified = TestPods.priority(TestPods.gpus(2), 0, PriorityHint.UNSET, GpuPreference.UNSET);

        assertThat(PolicyAnswers.prioritize(policy, high, nodes, PlacementContext.EMPTY).ranked().getFirst().node()).isEqualTo("h100");
        assertThat(PolicyAnswers.prioritize(policy, low, nodes, PlacementContext.EMPTY).ranked().getFirst().node()).isEqualTo("k80");
        // Priority 0 (no PriorityClass) is neutral: no node wins on card tier alone.
        var neutral = PolicyAnswers.prioritize(policy, unclassified, nodes, PlacementContext.EMPTY);
        int tier = neutral.scorers().indexOf("tier");
        assertThat(neutral.rows()).extracting(row -> row.parts()[tier]).containsOnly(neutral.rows().get(0).parts()[tier]);
    }

    @Test
    void gpusArePackedWithinATierButNotMovedToAnOlderOne() {
        var low = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET);
        var k80Empty = TestNodes.gpu("k80-empty", TestTopologies::k80x4);
        var k80Busy = TestNodes.gpu("k80-busy", TestTopologies::k80x4, 3);
        var v100Busy = TestNodes.gpu("v100-busy", TestTopologies::dgx1V100, 2);
        // Among the oldest cards the fuller node wins, so that the empty K80 server stays whole for a 4-GPU pod.
        assertThat(PolicyAnswers.prioritize(policy, low, List.of(k80Empty, k80Busy, v100Busy), PlacementContext.EMPTY).ranked())
                .extracting(ScoreTable.Row::node).containsExactly("k80-busy", "k80-empty", "v100-busy");
        // A high-priority pod keeps the newest cards even where only an older node would be left full.
        var high = TestPods.priority(TestPods.gpus(1), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        assertThat(PolicyAnswers.prioritize(policy, high, List.of(k80Busy, TestNodes.gpu("v100-empty", TestTopologies::dgx1V100)),
                PlacementContext.EMPTY).ranked().getFirst().node()).isEqualTo("v100-empty");
    }

    @Test
    void scoresStayInZeroToTen() {
        var nodes = List.of(TestNodes.gpu("k80", TestTopologies::k80x4), TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.cpu("c"));
        var pod = TestPods.priority(TestPods.gpus(2), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var table = PolicyAnswers.prioritize(policy, pod, nodes, new PlacementContext(List.of(new PeerLocation("w0", "h100", "", "")), List.of()));
        assertThat(table.rows()).allSatisfy(row -> assertThat(row.score()).isBetween(0, 10));
        assertThat(table.rows().get(1).score()).isEqualTo(10);
        assertThat(table.rows().get(2).score()).isZero();
        assertThat(table.rows().get(2).rejection()).isEqualTo("node has no GPUs, pod needs 2");
    }

    @Test
    void cpuPodsScoreEveryGpuNodeBelowEveryCpuNode() {
        var gpuNode = TestNodes.gpu("h100", TestTopologies::dgxH100);
        var cpuNode = TestNodes.cpu("cpu");
        var pod = TestPods.job(PodRequest.gpus("serve", 0), "j");
        // Even with the job's peer on the GPU node, the CPU node wins.
        var context = new PlacementContext(List.of(new PeerLocation("peer", "h100", "", "")), List.of());
        var table = PolicyAnswers.prioritize(policy, pod, List.of(gpuNode, cpuNode), context);
        assertThat(table.rows().get(0).score()).isZero();
        assertThat(table.rows().get(1).score()).isPositive();

        // With no CPU node left, GPU nodes are scored normally.
        assertThat(PolicyAnswers.prioritize(policy, pod, List.of(gpuNode), context).rows().getFirst().score()).isPositive();
    }

    @Test
    void theScoreTableRendersForTheDebugLog() {
        var table = PolicyAnswers.prioritize(policy, TestPods.gpus(2), List.of(TestNodes.gpu("h100", TestTopologies::dgxH100),
                TestNodes.cpu("cpu")), PlacementContext.EMPTY);
        assertThat(table.render()).contains("h100").contains("2x H100 link 1800").contains("refused: node has no GPUs, pod needs 2");
    }
}
