package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** On nodes a DRA driver serves, priority picks the card and topology the set: the generation, then the set, then the tier. */
class CardThenSetTest {

    private static final PlacementPolicy POLICY = new PlacementPolicy(PolicySettings.DEFAULTS);

    private final NodeState k80 = TestNodes.hetgpuDra("k80", TestTopologies::k80x4);
    private final NodeState t4 = TestNodes.hetgpuDra("t4", TestTopologies::t4x4);
    private final NodeState p100 = TestNodes.hetgpuDra("p100", TestTopologies::dgx1P100);
    private final NodeState v100 = TestNodes.hetgpuDra("v100", TestTopologies::dgx1V100);
    private final NodeState v100Pcie = TestNodes.hetgpuDra("v100-pcie", node -> TestTopologies.v100Pcie(node, 8));
    private final NodeState a100 = TestNodes.hetgpuDra("a100", TestTopologies::dgxA100);
    private final NodeState h100Pcie = TestNodes.hetgpuDra("h100-pcie", node -> TestTopologies.h100Pcie(node, 8));
    private final NodeState h100 = TestNodes.hetgpuDra("h100", TestTopologies::dgxH100);

    private static PodRequest pod(int gpus, int priority) {
        return TestPods.priority(TestPods.gpus(gpus), priority, PriorityHint.UNSET, GpuPreference.UNSET);
    }

    /** The nodes from the best score to the worst, as the whole policy ranks them. */
    private static List<String> ranked(PodRequest pod, NodeState... nodes) {
        var table = POLICY.scoreCandidates(pod, candidates(pod, nodes), PlacementContext.EMPTY);
        return table.ranked().stream().map(ScoreTable.Row::node).toList();
    }

    @Test
    void aLowPriorityJobTakesTheOldestGenerationFirstAndWithinItTheBestSet() {
        var order = ranked(pod(4, -10), h100, a100, v100, v100Pcie, p100, t4, k80);
        // Older generation (K80, P100, T4): the P100's NVLink set first, then the PCIe boxes; Volta: the set, then PCIe.
        assertThat(order.subList(0, 3)).startsWith("p100").containsExactlyInAnyOrder("p100", "k80", "t4");
        assertThat(order.subList(3, order.size())).containsExactly("v100", "v100-pcie", "a100", "h100");
    }

    @Test
    void anUrgentJobTakesTheNewestGenerationFirstEvenWithoutASet() {
        var order = ranked(pod(2, 1_000_000), a100, h100Pcie, h100, v100, k80);
        assertThat(order).containsExactly("h100", "h100-pcie", "a100", "v100", "k80");
    }

    @Test
    void theOrderDoesNotDependOnWhichOtherNodesAreScored() {
        // Under a weighted sum, the H100's presence would move the V100 set's relative tier, and with it its place.
        assertThat(ranked(pod(4, -10), v100, k80)).containsExactly("k80", "v100");
        assertThat(ranked(pod(4, -10), h100, v100, k80)).containsExactly("k80", "v100", "h100");
        assertThat(ranked(pod(4, -10), h100, a100, v100, t4, k80).indexOf("k80")).isLessThan(ranked(pod(4, -10), h100, a100, v100, t4, k80).indexOf("v100"));
    }

    @Test
    void aNormalPodOrOneGpuOrAMeasuredClassOrADevicePluginNodeIsRankedAsBefore() {
        var dra = candidates(pod(4, -10), k80, v100);
        var table = new WorkloadThroughputs(Map.of("resnet", Map.of("K80", 1.0, "V100", 4.0, "H100", 9.0)), 0);
        assertThat(CardThenSet.applies(pod(4, 500), GpuPreference.ANY, WorkloadThroughputs.NONE, dra)).isFalse();
        assertThat(CardThenSet.applies(pod(1, -10), GpuPreference.OLDEST, WorkloadThroughputs.NONE, dra)).isFalse();
        assertThat(CardThenSet.applies(pod(4, -10), GpuPreference.OLDEST, WorkloadThroughputs.NONE, dra)).isTrue();
        assertThat(CardThenSet.applies(pod(4, 1_000_000), GpuPreference.NEWEST, WorkloadThroughputs.NONE, dra)).isTrue();
        var resnet = pod(4, -10).withWorkload("resnet");
        assertThat(CardThenSet.applies(resnet, GpuPreference.OLDEST, table, dra)).isFalse();
        assertThat(CardThenSet.applies(resnet, GpuPreference.OLDEST, WorkloadThroughputs.NONE, dra)).as("a class with no figures").isTrue();

        // hetgpu's device plugin: no claim's order to agree with, so tier and NVLink weigh against each other, the links
        // measured (an NVSwitch pair 1800, a DGX-1 pair 100 or 200, a K80 board 60) rather than ranked by set size.
        var plugin = candidates(pod(2, -10), TestNodes.gpu("k80", TestTopologies::k80x4), TestNodes.gpu("v100", TestTopologies::dgx1V100),
                TestNodes.gpu("h100", TestTopologies::dgxH100));
        assertThat(CardThenSet.applies(pod(2, -10), GpuPreference.OLDEST, WorkloadThroughputs.NONE, plugin)).isFalse();
        var weighed = POLICY.scoreCandidates(pod(2, -10), plugin, PlacementContext.EMPTY);
        int nvlink = weighed.scorers().indexOf("nvlink");
        var links = NvlinkScorer.linkShares(plugin);
        for (int i = 0; i < plugin.size(); i++) {
            assertThat(weighed.row(i).parts()[nvlink]).as(weighed.row(i).node()).isEqualTo(links[i]);
        }
    }

    private static List<Candidate> candidates(PodRequest pod, NodeState... nodes) {
        return Arrays.stream(nodes).map(node -> ((PlacementPolicy.Fit) PolicyAnswers.assess(POLICY, pod, node)).candidate()).toList();
    }

    @Test
    void theNvlinkColumnFollowsTheTierColumnWhereTheRuleApplies() {
        var pod = pod(2, -10);
        var candidates = candidates(pod, h100, v100, k80);
        var table = POLICY.scoreCandidates(pod, candidates, PlacementContext.EMPTY);
        int tier = table.scorers().indexOf("tier");
        int nvlink = table.scorers().indexOf("nvlink");
        for (var row : table.rows()) {
            assertThat(row.parts()[nvlink]).as(row.node()).isEqualTo(row.parts()[tier]);
        }
        // Without a tier preference the column is the links alone: the H100's NVSwitch set is the best.
        var normal = pod(2, 500);
        var plain = POLICY.scoreCandidates(normal, candidates, PlacementContext.EMPTY);
        assertThat(plain.rows().getFirst().parts()[nvlink]).isEqualTo(1.0);
    }

    @Test
    void placesAreDenseAndEqualOnlyWhereAllThreeAre() {
        var pod = pod(2, -10);
        var candidates = candidates(pod, k80, TestNodes.hetgpuDra("k80-b", TestTopologies::k80x4), v100);
        var scores = CardThenSet.scores(GpuPreference.OLDEST, candidates, new double[] {1, 1, 0}, NvlinkScorer.linkShares(candidates));
        assertThat(scores).containsExactly(1.0, 1.0, 0.0);
        assertThat(CardThenSet.scores(GpuPreference.OLDEST, candidates.subList(0, 1), new double[] {1}, new double[] {0})).containsExactly(1.0);
    }
}
