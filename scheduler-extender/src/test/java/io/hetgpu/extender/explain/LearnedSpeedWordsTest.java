package io.hetgpu.extender.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.explain.PodSpeeds.Figure;
import io.hetgpu.extender.explain.PodSpeeds.Source;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicyAnswers;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.extender.throughput.WorkSample;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A placement's explanation says when a workload's speed decided, with the figure and what it rests on: learned from
 * runs (how many), a prior, or the admin's table.
 */
class LearnedSpeedWordsTest {

    @Test
    void aCardThatLostOnSpeedIsSaidWithTheRatioAndTheRunsBehindBothFigures() {
        var a100 = new Figure("A100", 1250, 14, Source.LEARNED);
        var k80 = new Figure("K80", 403.2, 9, Source.LEARNED);

        assertThat(LearnedSpeedWords.faster("resnet50", a100, k80))
                .isEqualTo("resnet50 runs 3.1x faster per GPU on A100 than on K80 (learned, 14 and 9 runs)");
    }

    @Test
    void eachFiguresSourceIsNamedWhenTheyDiffer() {
        var h100 = new Figure("H100", 4000, 0, Source.PRIOR);
        var v100 = new Figure("V100", 100, 1, Source.LEARNED);

        assertThat(LearnedSpeedWords.faster("bert", h100, v100))
                .isEqualTo("bert runs 40x faster per GPU on H100 than on V100 (H100 a prior, never run there; V100 learned, 1 run)");
        assertThat(LearnedSpeedWords.faster("bert", new Figure("A100", 105, 0, Source.CONFIGURED), new Figure("V100", 100, 0, Source.CONFIGURED)))
                .isEqualTo("bert runs 1.05x faster per GPU on A100 than on V100 (admin's table)");
    }

    @Test
    void aCardRefusedForSpeedIsSaidAsItsShareOfTheBestWithTheSetting() {
        var a100 = new Figure("A100", 1250, 14, Source.LEARNED);
        var k80 = new Figure("K80", 150, 9, Source.LEARNED);

        assertThat(LearnedSpeedWords.tooSlow("resnet50", k80, a100, 0.3))
                .isEqualTo("resnet50 runs at 0.12 of its A100 speed on K80 (learned, 9 runs; minimumSpeedShare 0.3)");
        assertThat(LearnedSpeedWords.tooSlow("resnet50", k80, new Figure("A100", 1250, 0, Source.CONFIGURED), 0.25))
                .isEqualTo("resnet50 runs at 0.12 of its A100 speed on K80 (learned, 9 runs; A100: admin's table; minimumSpeedShare 0.25)");
    }

    @Test
    void wordsAreAsciiAsEveryReasonIs() {
        var text = LearnedSpeedWords.faster("resnet50", new Figure("A100", 1250, 14, Source.LEARNED), new Figure("K80", 1, 9, Source.PRIOR));
        assertThat(text.getBytes(StandardCharsets.UTF_8)).hasSize(text.length());
    }

    @Test
    void figuresAreToldApartByWhereTheyComeFrom() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (int i = 0; i < 3; i++) {
            learner.observe(new WorkSample("resnet50", "team-a", "A100", 2, 600, 600 * 2 * 1250.0, Instant.EPOCH));
        }
        var admin = new WorkloadThroughputs(Map.of("bert", Map.of("V100", 100.0)));
        var speeds = PodSpeeds.of("ResNet50 ", ThroughputSource.learning(learner, admin).current());

        assertThat(speeds.workload()).isEqualTo("resnet50");
        assertThat(speeds.on("A100")).contains(new Figure("A100", 1250.0, 3, Source.LEARNED));
        assertThat(speeds.on("K80")).hasValueSatisfying(figure -> assertThat(figure.source()).isEqualTo(Source.PRIOR));
        assertThat(speeds.on("NOT-A-CARD")).isEmpty();
        assertThat(speeds.fastestKnown()).map(Figure::card).contains("A100");
        var bert = PodSpeeds.of("bert", ThroughputSource.learning(learner, admin).current());
        assertThat(bert.on("V100")).contains(new Figure("V100", 100.0, 0, Source.CONFIGURED));
        assertThat(PodSpeeds.of("unknown", ThroughputSource.learning(learner, admin).current())).isEqualTo(PodSpeeds.NONE);
        assertThat(PodSpeeds.of("resnet50", null)).isEqualTo(PodSpeeds.NONE);
    }

    @Test
    void thePlacementExplanationGivesTheLearnedFigureWhereSpeedDecided() {
        // resnet50 learned on both V100 and K80 boxes; a high-priority pod goes where it runs fastest.
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.restore(new LearnedState(List.of(new LearnedState.ClassSamples("resnet50", List.of(
                new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("team-a", List.of(400.0, 410.0, 420.0)))),
                new LearnedState.CardSamples("K80", List.of(new LearnedState.NamespaceSamples("team-a", List.of(130.0, 131.0)))))))));
        var source = ThroughputSource.learning(learner, WorkloadThroughputs.NONE);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS, source);
        var pod = TestPods.priority(TestPods.gpus(1), 5000, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload("resnet50");
        var table = PolicyAnswers.prioritize(policy, pod, List.of(TestNodes.gpu("k80", TestTopologies::k80x4),
                TestNodes.gpu("v100", TestTopologies::dgx1V100)), PlacementContext.EMPTY);

        var explained = PlacementExplanation.of(table, PodSpeeds.of(pod.workload(), source.current()));

        assertThat(explained).startsWith("best: v100 scores ")
                .contains("k80 ", "resnet50 runs 3.1x faster per GPU on V100 than on K80 (learned, 3 and 2 runs)");
        // Without the pod's speeds, the same table is said in tiers, as before learning.
        assertThat(PlacementExplanation.of(table)).doesNotContain("resnet50").contains("tier 10 K80 vs 40");
    }

    @Test
    void aNewerCardTheClassRunsSlowerOnIsSaidWithTheFigures() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.restore(new LearnedState(List.of(new LearnedState.ClassSamples("recommendation", List.of(
                new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("team-a", List.of(13.0)))),
                new LearnedState.CardSamples("K80", List.of(new LearnedState.NamespaceSamples("team-a", List.of(20.0)))))))));
        var source = ThroughputSource.learning(learner, WorkloadThroughputs.NONE);
        var pod = TestPods.priority(TestPods.gpus(1), 5000, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload("recommendation");
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS, source), pod,
                List.of(TestNodes.gpu("v100", TestTopologies::dgx1V100), TestNodes.gpu("k80", TestTopologies::k80x4)), PlacementContext.EMPTY);

        assertThat(PlacementExplanation.of(table, PodSpeeds.of(pod.workload(), source.current())))
                .startsWith("best: k80 scores 10/10").contains("v100 0/10 (recommendation runs 1.5x faster per GPU on K80 than on V100 (learned, 1 and 1 run))");
    }

    @Test
    void aLowPriorityPodLeavingAFasterNewerCardIsToldItsTierNotASpeed() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.restore(new LearnedState(List.of(new LearnedState.ClassSamples("resnet50", List.of(
                new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("team-a", List.of(400.0)))),
                new LearnedState.CardSamples("K80", List.of(new LearnedState.NamespaceSamples("team-a", List.of(130.0)))))))));
        var source = ThroughputSource.learning(learner, WorkloadThroughputs.NONE);
        var pod = TestPods.priority(TestPods.gpus(1), -100, PriorityHint.UNSET, GpuPreference.UNSET).withWorkload("resnet50");
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS, source), pod,
                List.of(TestNodes.gpu("v100", TestTopologies::dgx1V100), TestNodes.gpu("k80", TestTopologies::k80x4)), PlacementContext.EMPTY);

        assertThat(PlacementExplanation.of(table, PodSpeeds.of(pod.workload(), source.current())))
                .startsWith("best: k80 scores 10/10").contains("v100 0/10 (tier 40 V100 vs 10, oldest preferred").doesNotContain("runs");
    }
}
