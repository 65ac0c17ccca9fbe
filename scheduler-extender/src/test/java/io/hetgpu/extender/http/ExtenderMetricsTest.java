package io.hetgpu.extender.http;

import io.hetgpu.extender.policy.PolicyAnswers;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExtenderMetricsTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    @Test
    void countsPlacementsByTheModelOfTheBestNode() {
        var metrics = new ExtenderMetrics();
        var nodes = List.of(TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.cpu("cpu"));
        metrics.placed(TestPods.gpus(2), PolicyAnswers.prioritize(policy, TestPods.gpus(2), nodes, PlacementContext.EMPTY));
        metrics.placed(PodRequest.gpus("serve", 0), PolicyAnswers.prioritize(policy, PodRequest.gpus("serve", 0), nodes, PlacementContext.EMPTY));
        metrics.placed(TestPods.gpus(9), PolicyAnswers.prioritize(policy, TestPods.gpus(9), nodes, PlacementContext.EMPTY));

        var text = metrics.scrape();
        assertThat(text).contains("hetgpu_extender_placements_total{tier=\"H100\"} 1.0");
        assertThat(text).contains("hetgpu_extender_placements_total{tier=\"cpu\"} 1.0");
    }
}
