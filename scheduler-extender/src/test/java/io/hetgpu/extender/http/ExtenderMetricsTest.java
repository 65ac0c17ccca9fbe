package io.hetgpu.extender.http;

import io.hetgpu.extender.policy.PolicyAnswers;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExtenderMetricsTest {

    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    @Test
    void countsPlacementsByTheModelOfTheBestNodeThePodsPriorityAndItsGpusLinks() {
        var metrics = new ExtenderMetrics();
        var nodes = List.of(TestNodes.gpu("h100", TestTopologies::dgxH100), TestNodes.cpu("cpu"));
        var thresholds = PriorityThresholds.DEFAULTS;
        var urgent = TestPods.priority(TestPods.gpus(2), 1000, PriorityHint.UNSET, GpuPreference.UNSET);
        var sweep = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET);
        metrics.placed(urgent, PolicyAnswers.prioritize(policy, urgent, nodes, PlacementContext.EMPTY), thresholds);
        metrics.placed(sweep, PolicyAnswers.prioritize(policy, sweep, nodes, PlacementContext.EMPTY), thresholds);
        metrics.placed(PodRequest.gpus("serve", 0), PolicyAnswers.prioritize(policy, PodRequest.gpus("serve", 0), nodes, PlacementContext.EMPTY),
                thresholds);
        metrics.placed(TestPods.gpus(9), PolicyAnswers.prioritize(policy, TestPods.gpus(9), nodes, PlacementContext.EMPTY), thresholds);

        var text = metrics.scrape();
        assertThat(text).contains("hetgpu_extender_placements_total{link=\"nvlink\",priority=\"high\",tier=\"H100\"} 1.0");
        assertThat(text).contains("hetgpu_extender_placements_total{link=\"one-gpu\",priority=\"low\",tier=\"H100\"} 1.0");
        assertThat(text).contains("hetgpu_extender_placements_total{link=\"no-gpu\",priority=\"normal\",tier=\"cpu\"} 1.0");
        assertThat(text).as("a pod no node fits is not counted").doesNotContain("} 2.0");
    }

    @Test
    void showsEachLearnedFigureWithItsSamplesAndDropsTheRowsOfAClassTheLearnerDropped() {
        var metrics = new ExtenderMetrics();
        // One class at a time: a second class pushes the first out of the learner, and out of the metrics.
        var learner = new io.hetgpu.extender.throughput.ThroughputLearner(
                new io.hetgpu.extender.throughput.LearningSettings(true, 120, 16, 16, 1, 5, 5, 2, true));
        var learning = new io.hetgpu.extender.cluster.ThroughputLearning(learner,
                new io.hetgpu.extender.cluster.LearnedThroughputsConfigMap(null, "hetgpu-system"),
                new io.hetgpu.extender.cluster.ThroughputLearning.Sources(java.util.Set.of(), node -> null, (pod, gpus, node) -> null,
                        pod -> 0, (pod, card, gpus) -> null), io.hetgpu.extender.cluster.ThroughputLearning.Settings.DEFAULTS);
        metrics.watchLearning(learning);
        var ended = java.time.Instant.parse("2026-11-28T04:00:00Z");
        learner.observe(new io.hetgpu.extender.throughput.WorkSample("resnet50", "ml", "V100", 2, 600, 12_000, ended));
        learner.observe(new io.hetgpu.extender.throughput.WorkSample("resnet50", "ml", "V100", 2, 600, 13_200, ended));

        var scraped = metrics.scrape();
        // The learner's figure, whatever its estimate (between the two runs' 10 and 11).
        double figure = learner.table().byClass().get("resnet50").get("V100").throughputPerGpu();
        assertThat(figure).isBetween(10.0, 11.0);
        assertThat(scraped).contains("hetgpu_extender_learned_throughput{card=\"V100\",workload=\"resnet50\"} " + figure)
                .contains("hetgpu_extender_learned_samples{card=\"V100\",workload=\"resnet50\"} 2.0")
                .contains("hetgpu_extender_learning_samples_accepted_total 0.0")
                .contains("hetgpu_extender_learning_samples_refused_total{reason=\"outlier\"} 0.0")
                .contains("hetgpu_extender_learning_pods_dropped_total 0.0")
                .as("priors are not shown").doesNotContain("card=\"K80\"");

        learner.observe(new io.hetgpu.extender.throughput.WorkSample("bert", "ml", "A100", 1, 600, 600, ended));
        var after = metrics.scrape();
        assertThat(after).doesNotContain("workload=\"resnet50\"")
                .contains("hetgpu_extender_learned_throughput{card=\"A100\",workload=\"bert\"} 1.0");
        learning.close();
    }

    @Test
    void theBytesInFlightGaugeOutlivesAGarbageCollection() {
        var metrics = new ExtenderMetrics();
        var taken = new java.util.concurrent.atomic.AtomicLong(4096);
        // A method reference as the server passes one: a new object that only the gauge holds.
        metrics.watchBytesInFlight(taken::get);
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        assertThat(metrics.scrape()).contains("hetgpu_extender_request_bytes_in_flight_bytes 4096.0");
    }

    @Test
    void countsBindsByOutcomeAndTimesThem() {
        var metrics = new ExtenderMetrics();
        metrics.bound(new io.hetgpu.extender.service.BindVerb.Report(io.hetgpu.extender.service.BindVerb.Outcome.BOUND, java.time.Duration.ofMillis(12)));
        metrics.bound(new io.hetgpu.extender.service.BindVerb.Report(io.hetgpu.extender.service.BindVerb.Outcome.BOUND, java.time.Duration.ofMillis(8)));
        metrics.bound(new io.hetgpu.extender.service.BindVerb.Report(io.hetgpu.extender.service.BindVerb.Outcome.CONFLICT, java.time.Duration.ofMillis(3)));

        var text = metrics.scrape();
        assertThat(text).contains("hetgpu_extender_binds_total{outcome=\"bound\"} 2.0");
        assertThat(text).contains("hetgpu_extender_binds_total{outcome=\"conflict\"} 1.0");
        assertThat(text).contains("hetgpu_extender_bind_duration_seconds_sum{outcome=\"bound\"} 0.02");
    }

    @Test
    void countsUntrustedRecordsByReasonEachPodOnce() {
        var metrics = new ExtenderMetrics();
        var refusals = new io.hetgpu.extender.trust.UntrustedRecords(100);
        metrics.watchUntrustedRecords(refusals);
        refusals.refused("u1", "ml", "a", io.hetgpu.extender.trust.Distrust.UNSIGNED, "no sig");
        refusals.refused("u1", "ml", "a", io.hetgpu.extender.trust.Distrust.UNSIGNED, "no sig");
        refusals.refused("u2", "ml", "b", io.hetgpu.extender.trust.Distrust.FUTURE, "later");

        var text = metrics.scrape();
        assertThat(text).contains("hetgpu_extender_untrusted_records_total{reason=\"unsigned\"} 1.0");
        assertThat(text).contains("hetgpu_extender_untrusted_records_total{reason=\"future\"} 1.0");
        assertThat(text).as("every reason exported from the start").contains("hetgpu_extender_untrusted_records_total{reason=\"other_node\"} 0.0");
    }
}
