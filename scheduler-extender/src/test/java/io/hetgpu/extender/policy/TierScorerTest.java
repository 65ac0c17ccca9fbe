package io.hetgpu.extender.policy;

import static io.hetgpu.extender.policy.ScorersTest.score;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PriorityHint;
import org.junit.jupiter.api.Test;

class TierScorerTest {

    private final NodeState k80 = TestNodes.gpu("k80", TestTopologies::k80x4);
    private final NodeState v100 = TestNodes.gpu("v100", TestTopologies::dgx1V100);
    private final NodeState h100 = TestNodes.gpu("h100", TestTopologies::dgxH100);

    private final TierScorer scorer = new TierScorer(PriorityThresholds.DEFAULTS);

    @Test
    void highPriorityPrefersTheNewestTier() {
        var pod = TestPods.priority(TestPods.gpus(1), 5000, PriorityHint.UNSET, GpuPreference.UNSET);
        assertThat(score(scorer, pod, k80, v100, h100)).containsExactly(0.0, 0.4, 1.0);
    }

    @Test
    void lowPriorityPrefersTheOldestTierThatFits() {
        var pod = TestPods.priority(TestPods.gpus(1), -10, PriorityHint.UNSET, GpuPreference.UNSET);
        assertThat(score(scorer, pod, k80, v100, h100)).containsExactly(1.0, 0.6, 0.0);
    }

    @Test
    void betweenTheThresholdsEveryTierIsEqual() {
        var pod = TestPods.priority(TestPods.gpus(1), 500, PriorityHint.UNSET, GpuPreference.UNSET);
        assertThat(score(scorer, pod, k80, v100, h100)).containsExactly(0.0, 0.0, 0.0);
    }

    @Test
    void theAnnotationStandsInForSpecPriorityAndThePreferenceOverridesBoth() {
        var hinted = TestPods.priority(TestPods.gpus(1), 5000, PriorityHint.LOW, GpuPreference.UNSET);
        assertThat(score(scorer, hinted, k80, h100)).containsExactly(1.0, 0.0);
        var preferred = TestPods.priority(TestPods.gpus(1), -10, PriorityHint.LOW, GpuPreference.NEWEST);
        assertThat(score(scorer, preferred, k80, h100)).containsExactly(0.0, 1.0);
    }
}
