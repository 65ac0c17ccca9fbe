package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

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
import org.junit.jupiter.api.Test;

/** Eight V100 kept for high-priority pods on a cluster of two DGX-1 V100 and a K80 server. */
class HighPriorityReserveTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS.withReserve(new HighPriorityReserve(8)));
    private final NodeState k80 = TestNodes.gpu("k80", TestTopologies::k80x4);

    private static PodRequest pod(int gpus, int priority, PriorityHint hint, GpuPreference preference) {
        return TestPods.priority(TestPods.gpus(gpus), priority, hint, preference);
    }

    private static PodRequest ordinary(int gpus) {
        return pod(gpus, 0, PriorityHint.UNSET, GpuPreference.UNSET);
    }

    /** dgx-a all free; dgx-b with the given positions free. */
    private static List<NodeState> cluster(int... dgxBFree) {
        return List.of(TestNodes.gpu("dgx-a", TestTopologies::dgx1V100), TestNodes.gpu("dgx-b", TestTopologies::dgx1V100, dgxBFree),
                TestNodes.gpu("k80", TestTopologies::k80x4));
    }

    @Test
    void headroomIsTheFreeGpusOfTheClustersTopTier() {
        var headroom = TopTierHeadroom.of(cluster(0, 1, 2));
        assertThat(headroom.models()).isEqualTo("V100");
        assertThat(headroom.free()).isEqualTo(11);
        assertThat(TopTierHeadroom.of(List.of(k80, TestNodes.cpu("cpu"))).models()).isEqualTo("K80");
        assertThat(TopTierHeadroom.of(List.of(TestNodes.cpu("cpu")))).isEqualTo(TopTierHeadroom.NONE);
    }

    @Test
    void anOrdinaryPodTakesTopTierCardsWhileMoreThanTheReserveStaysFree() {
        var nodes = cluster(0, 1, 2, 3);
        // 12 V100 free: taking 4 leaves the 8 kept.
        assertThat(PolicyAnswers.filter(policy, ordinary(4), nodes, TopTierHeadroom.of(nodes)).fitting()).containsExactly("dgx-a", "dgx-b", "k80");
    }

    @Test
    void belowTheReserveAnOrdinaryPodIsRefusedTheTopTierAndToldWhyButKeepsOlderCards() {
        var nodes = cluster(0, 1, 2);
        var outcome = PolicyAnswers.filter(policy, ordinary(4), nodes, TopTierHeadroom.of(nodes));

        assertThat(outcome.fitting()).containsExactly("k80");
        assertThat(outcome.failed()).as("a card released later reopens them: not unresolvable").containsOnlyKeys("dgx-a", "dgx-b");
        assertThat(outcome.failed().get("dgx-a")).isEqualTo("the cluster's last 8 free V100 are kept for high-priority pods (11 free now)");
        assertThat(outcome.failed().get("dgx-b")).as("too few free cards with the reserve or without").isEqualTo("3 free V100, pod needs 4");
        assertThat(outcome.unresolvable()).isEmpty();
        assertThat(PolicyAnswers.filter(policy, ordinary(3), nodes, TopTierHeadroom.of(nodes)).fitting())
                .as("3 of 11 leave 8").contains("dgx-a", "dgx-b");
    }

    @Test
    void highPriorityPodsTakeTheReservedCards() {
        var nodes = cluster();
        var headroom = TopTierHeadroom.of(nodes);
        assertThat(headroom.free()).isEqualTo(8);
        assertThat(PolicyAnswers.filter(policy, pod(8, 1000, PriorityHint.UNSET, GpuPreference.UNSET), nodes, headroom).fitting()).containsExactly("dgx-a");
        var trusting = new PlacementPolicy(PolicySettings.DEFAULTS.withReserve(new HighPriorityReserve(8))
                .withThresholds(new PriorityThresholds(1000, -1, java.util.Set.of("default"))));
        assertThat(PolicyAnswers.filter(trusting, pod(4, 0, PriorityHint.HIGH, GpuPreference.UNSET), nodes, headroom).fitting())
                .as("the annotation raises a pod of a trusted namespace").containsExactly("dgx-a", "k80");
    }

    @Test
    void aLowPriorityPodThatWritesHighIsRefusedTheReserveAndToldTheAnnotationWasIgnored() {
        var nodes = cluster();
        var outcome = PolicyAnswers.filter(policy, pod(4, -100, PriorityHint.HIGH, GpuPreference.UNSET), nodes, TopTierHeadroom.of(nodes));

        assertThat(outcome.fitting()).containsExactly("k80");
        assertThat(outcome.failed().get("dgx-a")).isEqualTo("the cluster's last 8 free V100 are kept for high-priority pods (8 free now); "
                + "hetgpu.io/priority: high ignored, spec.priority -100 gives low (only a trusted namespace may raise it)");
    }

    @Test
    void thePriorityAnnotationDecidesAndAGpuPreferenceDoesNotBuyTheReserve() {
        var nodes = cluster();
        var headroom = TopTierHeadroom.of(nodes);
        assertThat(PolicyAnswers.filter(policy, pod(1, 5000, PriorityHint.LOW, GpuPreference.UNSET), nodes, headroom).fitting()).containsExactly("k80");
        assertThat(PolicyAnswers.filter(policy, pod(1, 0, PriorityHint.UNSET, GpuPreference.NEWEST), nodes, headroom).fitting()).containsExactly("k80");
    }

    @Test
    void offByDefaultAndWithoutAnyHeadroomKnown() {
        var nodes = cluster();
        var shipped = new PlacementPolicy(PolicySettings.DEFAULTS);
        assertThat(PolicyAnswers.filter(shipped, ordinary(4), nodes, TopTierHeadroom.of(nodes)).fitting()).containsExactly("dgx-a", "k80");
        assertThat(PolicyAnswers.filter(policy, ordinary(4), nodes).fitting()).containsExactly("dgx-a", "k80");
        assertThat(PolicyAnswers.filter(policy, TestPods.gpus(0), nodes, TopTierHeadroom.of(nodes)).fitting()).hasSize(3);
    }

    @Test
    void scoresRankOnlyTheNodesTheReserveLeaves() {
        var nodes = cluster(0, 1, 2);
        var table = PolicyAnswers.prioritize(policy, ordinary(4), nodes, PlacementContext.EMPTY, TopTierHeadroom.of(nodes));
        assertThat(table.rows()).extracting(ScoreTable.Row::node, row -> row.candidate() != null)
                .containsExactly(tuple("dgx-a", false), tuple("dgx-b", false),
                        tuple("k80", true));
    }

    @Test
    void theConfigFileSetsTheReserveAndRefusesNonsense() throws Exception {
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {highPriorityReserve: 8}", "c.yaml").reserve()).isEqualTo(new HighPriorityReserve(8));
        assertThat(ExtenderConfig.DEFAULTS.reserve().isOn()).isFalse();
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {highPriorityReserve: -2}", "c.yaml"))
                .hasMessage("c.yaml: policy.highPriorityReserve: expected 0 or more GPUs, got -2");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {highPriorityReserve: some}", "c.yaml"))
                .hasMessage("c.yaml: policy.highPriorityReserve: expected an integer, got \"some\"");
    }
}
