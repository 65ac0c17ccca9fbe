package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ThroughputLearnerTest {

    private static final Instant END = Instant.parse("2026-01-01T00:00:00Z");

    static WorkSample run(String workload, String namespace, String card, double perGpuPerSecond) {
        return new WorkSample(workload, namespace, card, 2, 600, perGpuPerSecond * 600 * 2, END);
    }

    @Test
    void aClassRunOnACardIsLearnedAsItsMedianThroughputPerGpu() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (double speed : new double[] {100, 104, 96, 300, 101}) {
            learner.observe(run("ResNet50", "team-a", "V100", speed));
        }
        var speed = learner.table().byClass().get("resnet50").get("V100");
        assertThat(speed.throughputPerGpu()).isEqualTo(101);
        assertThat(speed.samples()).isEqualTo(5);
        assertThat(speed.prior()).isFalse();
    }

    @Test
    void aShortRunIsNotAMeasurement() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var crashed = new WorkSample("resnet50", "team-a", "V100", 1, 30, 3000, END);
        assertThat(learner.observe(crashed)).isInstanceOfSatisfying(Observation.Refused.class,
                refused -> assertThat(refused.reason()).contains("run time: 30.00 s").contains("120.0 s"));
        assertThat(learner.table().byClass()).isEmpty();
    }

    @Test
    void cardsTheClassNeverRanOnGetAPriorFromItsSpeedOnOthers() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.observe(run("bert", "team-a", "V100", 10));
        var a100 = learner.table().byClass().get("bert").get("A100");
        assertThat(a100.prior()).isTrue();
        assertThat(a100.samples()).isZero();
        assertThat(a100.throughputPerGpu()).isCloseTo(10 * 2.5, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void theStateSurvivesItsJson() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        IntStream.range(0, 3).forEach(i -> learner.observe(run("bert", "team-a", "V100", 10 + i)));
        learner.observe(run("bert", "team-b", "T4", 4));
        var restored = new ThroughputLearner(LearningSettings.DEFAULTS);
        restored.restore(LearnedStateCodec.fromJson(LearnedStateCodec.toJson(learner.state())));
        assertThat(restored.state()).isEqualTo(learner.state());
        assertThat(restored.table().byClass()).isEqualTo(learner.table().byClass());
    }
}
