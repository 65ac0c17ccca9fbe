package io.hetgpu.extender.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlacementExplanationTest {

    private final PlacementPolicy policy = new PlacementPolicy(PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS);

    @Test
    void namesTheWinnerAndWhyTheRunnersUpLost() {
        var pod = TestPods.priority(TestPods.gpus(2), 100000, PriorityHint.UNSET, GpuPreference.UNSET);
        var table = policy.prioritize(pod, List.of(TestNodes.gpu("k80", TestTopologies::k80x4),
                TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.gpu("v100", TestTopologies::dgx1V100),
                TestNodes.cpu("cpu")), PlacementContext.EMPTY);

        assertThat(PlacementExplanation.of(table)).isEqualTo(
                "best: h100 (10; 2x H100, link 1800); v100 scored 3 (nvlink 0.11 vs 1.00, tier 0.40 vs 1.00); "
                        + "k80 scored 0 (tier 0.00 vs 1.00, nvlink 0.03 vs 1.00); 1 node does not fit");
    }

    @Test
    void saysWhyNoNodeFits() {
        var table = policy.prioritize(TestPods.gpus(2), List.of(TestNodes.cpu("cpu")), PlacementContext.EMPTY);
        assertThat(PlacementExplanation.of(table)).isEqualTo("no node fits: cpu: node has no GPUs, pod needs 2");
    }
}
