package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.explain.PlacementExplanation;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** GPU nodes whose GPUs come from GPU Feature Discovery's labels or the allocatable count alone, under the whole policy. */
class NodesNotServedByHetgpuTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    private static final String UNKNOWN_MODEL = "GPU model unknown: node has 4 GPUs of unknown model (no GPU Feature Discovery labels), pod needs ";

    private final Cluster nodes = new Cluster();

    /** The cluster of the tests: one node of each kind. */
    private static final class Cluster {
        final List<io.hetgpu.extender.model.NodeState> all = List.of(
                TestNodes.featureDiscovery("gfd-v100", TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 4), 4),
                TestNodes.allocatableOnly("plain", 4),
                TestNodes.cpu("cpu"));
    }

    @Test
    void gpuPodsFitOnGfdAndAllocatableOnlyNodesAndNotOnCpuNodes() {
        var outcome = PolicyAnswers.filter(policy, TestPods.gpus(2), nodes.all);

        assertThat(outcome.fitting()).containsExactly("gfd-v100", "plain");
        assertThat(outcome.unresolvable()).isEqualTo(Map.of("cpu", "node has no GPUs, pod needs 2"));
    }

    @Test
    void cardFiltersJudgeGfdNodesAndRefuseNodesOfUnknownModelSayingSo() {
        var v100 = PolicyAnswers.filter(policy, TestPods.models(TestPods.gpus(1), "V100"), nodes.all);
        assertThat(v100.fitting()).containsExactly("gfd-v100");
        assertThat(v100.unresolvable()).containsEntry("plain", UNKNOWN_MODEL + "V100");

        var a100 = PolicyAnswers.filter(policy, TestPods.models(TestPods.gpus(1), "A100"), nodes.all);
        assertThat(a100.fitting()).isEmpty();
        assertThat(a100.unresolvable()).containsEntry("gfd-v100",
                "node has 4 V100 (16 GiB, cc 7.0) from GPU Feature Discovery labels, links unknown, pod needs A100");

        var memory = PolicyAnswers.filter(policy, TestPods.memory(TestPods.gpus(1), 32 * 1024), nodes.all);
        assertThat(memory.unresolvable()).containsEntry("gfd-v100",
                "node has 4 V100 (16 GiB, cc 7.0) from GPU Feature Discovery labels, links unknown, pod needs at least 32 GiB per GPU")
                .containsEntry("plain", UNKNOWN_MODEL + "at least 32 GiB per GPU");

        var cc = PolicyAnswers.filter(policy, TestPods.computeCapability(TestPods.gpus(1), "7.0"), nodes.all);
        assertThat(cc.fitting()).containsExactly("gfd-v100");
        assertThat(cc.unresolvable()).containsEntry("plain", UNKNOWN_MODEL + "compute capability 7.0 or newer");
    }

    @Test
    void anNvlinkPodIsRefusedWhereLinksAreUnknown() {
        var outcome = PolicyAnswers.filter(policy, TestPods.nvlink(TestPods.gpus(2)), List.of(nodes.all.get(0), nodes.all.get(1),
                TestNodes.gpu("dgx", TestTopologies::dgx1V100)));

        assertThat(outcome.fitting()).containsExactly("dgx");
        assertThat(outcome.unresolvable()).isEqualTo(Map.of(
                "gfd-v100", NodeGpuSource.NVLINK_UNKNOWN,
                "plain", NodeGpuSource.NVLINK_UNKNOWN));
        assertThat(NodeGpuSource.NVLINK_UNKNOWN).startsWith("NVLink unknown: node not served by hetgpu's device plugin");
    }

    @Test
    void aGfdNodeInOneNvlinkCliqueTakesAnNvlinkPod() {
        var labels = TestNodes.gfdLabels("NVIDIA-GB200", 189471, 10, 0, 4);
        labels.put("nvidia.com/gpu.clique", "7b5f2b7e.32766");

        assertThat(PolicyAnswers.filter(policy, TestPods.nvlink(TestPods.gpus(4)), List.of(TestNodes.featureDiscovery("gb200", labels, 4))).fitting())
                .containsExactly("gb200");
    }

    @Test
    void unknownLinksScoreBelowKnownOnesNotAsGood() {
        var pcie = TestNodes.gpu("pcie", n -> TestTopologies.v100Pcie(n, 4));
        var table = PolicyAnswers.prioritize(policy, TestPods.gpus(2), List.of(nodes.all.get(0), pcie), PlacementContext.EMPTY);
        int nvlink = table.scorers().indexOf("nvlink");

        assertThat(table.rows().get(0).parts()[nvlink]).isZero();
        assertThat(table.rows().get(1).parts()[nvlink]).isEqualTo(1.0);
    }

    @Test
    void cpuPodsAreSteeredOffEveryKindOfGpuNode() {
        var cpuPod = PodRequest.gpus("serve", 0);
        var table = PolicyAnswers.prioritize(policy, cpuPod, nodes.all, PlacementContext.EMPTY);

        assertThat(table.ranked().getFirst().node()).isEqualTo("cpu");
        assertThat(table.rows()).filteredOn(row -> !row.node().equals("cpu")).extracting(ScoreTable.Row::score).containsOnly(0);
    }

    @Test
    void gfdNodesRankByTheirCardsTier() {
        var k80 = TestNodes.featureDiscovery("gfd-k80", TestNodes.gfdLabels("Tesla-K80", 11441, 3, 7, 8), 8);
        var h100 = TestNodes.featureDiscovery("gfd-h100", TestNodes.gfdLabels("NVIDIA-H100-80GB-HBM3", 81559, 9, 0, 8), 8);
        var high = TestPods.priority(TestPods.gpus(1), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var low = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET);

        assertThat(PolicyAnswers.prioritize(policy, high, List.of(k80, h100), PlacementContext.EMPTY).ranked().getFirst().node()).isEqualTo("gfd-h100");
        assertThat(PolicyAnswers.prioritize(policy, low, List.of(k80, h100), PlacementContext.EMPTY).ranked().getFirst().node()).isEqualTo("gfd-k80");
    }

    @Test
    void gpusOfUnknownModelSitInTheMiddleTier() {
        var k80 = TestNodes.gpu("k80", TestTopologies::k80x4);
        var h100 = TestNodes.gpu("h100", TestTopologies::dgxH100);
        var plain = nodes.all.get(1);
        var high = TestPods.priority(TestPods.gpus(1), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var low = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET);

        assertThat(PolicyAnswers.prioritize(policy, high, List.of(k80, plain, h100), PlacementContext.EMPTY).ranked())
                .extracting(ScoreTable.Row::node).containsExactly("h100", "plain", "k80");
        assertThat(PolicyAnswers.prioritize(policy, low, List.of(k80, plain, h100), PlacementContext.EMPTY).ranked())
                .extracting(ScoreTable.Row::node).containsExactly("k80", "plain", "h100");
        assertThat(plain.gpus().tiers().getFirst().rank()).isEqualTo(CardCatalog.defaults().middleRank());
    }

    @Test
    void aFullGfdNodeIsRetryableWithTheFreeCount() {
        var full = TestNodes.featureDiscovery("gfd", TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4), 4);
        var busy = new io.hetgpu.extender.model.NodeState("gfd", "", "", full.gpus(), 0b0001);

        assertThat(PolicyAnswers.filter(policy, TestPods.gpus(2), List.of(busy)).failed()).isEqualTo(Map.of("gfd", "1 free T4, pod needs 2"));
    }

    @Test
    void theExplanationNamesWhereTheGpusWereLearnedFrom() {
        var table = PolicyAnswers.prioritize(policy, TestPods.gpus(2), nodes.all.subList(0, 2), PlacementContext.EMPTY);

        assertThat(PlacementExplanation.of(table)).contains("2x V100, from GPU Feature Discovery labels, links unknown")
                .doesNotContain("link 10");
        var plainOnly = PolicyAnswers.prioritize(policy, TestPods.gpus(2), List.of(nodes.all.get(1)), PlacementContext.EMPTY);
        assertThat(PlacementExplanation.of(plainOnly)).contains("2x GPU of unknown model, from allocatable only");
    }

    @Test
    void theReserveKeepsNoGpusOfUnknownModel() {
        var plain = nodes.all.get(1);

        // Ranked in the middle, they would be this cluster's top tier; they are not known to be.
        var headroom = TopTierHeadroom.of(List.of(TestNodes.gpu("k80", TestTopologies::k80x4), plain));

        assertThat(headroom.models()).isEqualTo("K80");
        assertThat(headroom.free()).isEqualTo(4);
        var reserve = new HighPriorityReserve(4);
        var closed = reserve.closedTo(TestPods.gpus(1), PriorityThresholds.DEFAULTS, headroom);
        assertThat(policy.assess(TestPods.gpus(1), plain, closed)).isInstanceOf(PlacementPolicy.Fit.class);
    }
}
