package io.hetgpu.extender.explain;

import io.hetgpu.extender.policy.PolicyAnswers;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PlacementExplanationTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    @Test
    void namesTheWinnerAndWhyTheRunnersUpLost() {
        var pod = TestPods.priority(TestPods.gpus(2), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var table = PolicyAnswers.prioritize(policy, pod, List.of(TestNodes.gpu("k80", TestTopologies::k80x4),
                TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.gpu("v100", TestTopologies::dgx1V100),
                TestNodes.cpu("cpu")), PlacementContext.EMPTY);

        // Scores on the extender's 0..10 scale, tiers as the tier table ranks cards, links counted.
        assertThat(PlacementExplanation.of(table)).isEqualTo(
                "best: h100 scores 10/10 (2x H100, tier 85, 18 NVLinks per GPU pair); "
                        + "v100 3/10 (nvlink 2 vs 18 links per GPU pair, tier 40 V100 vs 85, newest preferred); "
                        + "k80 0/10 (tier 10 K80 vs 85, newest preferred, nvlink PCIe only (BRD) vs 18 NVLinks per GPU pair); "
                        + "1 node does not fit");
    }

    @Test
    void saysALowPriorityPodPrefersTheOldestTier() {
        var pod = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET);
        var table = PolicyAnswers.prioritize(policy, pod, List.of(TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.gpu("k80", TestTopologies::k80x4)),
                PlacementContext.EMPTY);

        assertThat(PlacementExplanation.of(table)).isEqualTo("best: k80 scores 10/10 (1x K80, tier 10); h100 0/10 (tier 85 H100 vs 10, oldest preferred)");
    }

    @Test
    void namesWhereTheDataAndTheJobsPodsAreInsteadOfClosenessFigures() {
        var pod = TestPods.job(TestPods.gpus(0), "resnet");
        var near = TestNodes.placed(TestNodes.cpu("cpu-a"), "rack-a", "zone-1");
        var far = TestNodes.placed(TestNodes.cpu("cpu-c"), "rack-c", "zone-2");
        var context = new PlacementContext(List.of(new PeerLocation("ps-0", "cpu-x", "rack-a", "zone-1")),
                List.of(new DataLocality(Set.of(), Set.of("rack-a"), Set.of())));

        assertThat(PlacementExplanation.of(PolicyAnswers.prioritize(policy, pod, List.of(far, near), context)))
                .isEqualTo("best: cpu-a scores 6/10 (CPU node); cpu-c 1/10 (job's pods elsewhere vs same rack, data elsewhere vs same rack)");
    }

    @Test
    void saysWhyNoNodeFits() {
        var table = PolicyAnswers.prioritize(policy, TestPods.gpus(2), List.of(TestNodes.cpu("cpu")), PlacementContext.EMPTY);
        assertThat(PlacementExplanation.of(table)).isEqualTo("no node fits: cpu: node has no GPUs, pod needs 2");
    }
}
