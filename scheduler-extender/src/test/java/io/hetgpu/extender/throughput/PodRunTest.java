package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class PodRunTest {

    private static PodBuilder ended(String phase, String message) {
        return new PodBuilder().withNewMetadata().withName("train-0").withNamespace("team-a")
                .addToAnnotations("hetgpu.io/workload", "ResNet50").endMetadata()
                .withNewSpec().addNewContainer().withName("train").endContainer().endSpec()
                .withNewStatus().withPhase(phase)
                .addNewContainerStatus().withName("train").withNewState().withNewTerminated()
                .withStartedAt("2026-01-01T00:00:00Z").withFinishedAt("2026-01-01T01:00:00Z").withMessage(message)
                .endTerminated().endState().endContainerStatus().endStatus();
    }

    private static WorkSample sample(Pod pod) {
        var outcome = PodRun.of(pod, "V100", 4);
        assertThat(outcome).isInstanceOf(PodRun.Outcome.Run.class);
        return ((PodRun.Outcome.Run) outcome).sample();
    }

    private static String reason(Pod pod) {
        var outcome = PodRun.of(pod, "V100", 4);
        assertThat(outcome).isInstanceOf(PodRun.Outcome.NotARun.class);
        return ((PodRun.Outcome.NotARun) outcome).reason();
    }

    @Test
    void aSucceededPodIsItsDeclaredWorkOverItsContainersRunTime() {
        var pod = ended("Succeeded", null).editMetadata().addToAnnotations("hetgpu.io/work", "72000").endMetadata().build();
        assertThat(sample(pod)).isEqualTo(new WorkSample("ResNet50", "team-a", "V100", 4, 3600, 72000, Instant.parse("2026-01-01T01:00:00Z")));
        assertThat(sample(pod).throughputPerGpu()).isEqualTo(5);
    }

    @Test
    void whatThePodReportsInItsTerminationMessageWinsOverWhatItDeclared() {
        var pod = ended("Succeeded", "epoch 3 done\nhetgpu.io/work: 1000\nhetgpu.io/work: 36000\n")
                .editMetadata().addToAnnotations("hetgpu.io/work", "72000").endMetadata().build();
        assertThat(sample(pod).work()).as("the last report").isEqualTo(36000);
    }

    @Test
    void anEvictedPodCountsOnlyWithAReportedFigure() {
        var evicted = ended("Failed", null).editStatus().withReason("Evicted").endStatus()
                .editMetadata().addToAnnotations("hetgpu.io/work", "72000").endMetadata().build();
        assertThat(reason(evicted)).startsWith("evicted without a hetgpu.io/work: line");
        var preempted = ended("Failed", "hetgpu.io/work: 9000").editStatus()
                .addToConditions(new PodConditionBuilder().withType("DisruptionTarget").withStatus("True").build()).endStatus().build();
        assertThat(sample(preempted).work()).isEqualTo(9000);
    }

    @Test
    void aFailedPodIsNotAMeasurement() {
        var crashed = ended("Failed", "hetgpu.io/work: 9000").build();
        assertThat(reason(crashed)).isEqualTo("phase \"Failed\": only a pod that succeeded or was evicted is a measurement");
        assertThat(reason(ended("Running", null).build())).startsWith("phase \"Running\"");
    }

    @Test
    void badFiguresAreRefusedNamingTheFieldAndValue() {
        assertThat(reason(ended("Succeeded", null).editMetadata().addToAnnotations("hetgpu.io/work", "lots").endMetadata().build()))
                .isEqualTo("hetgpu.io/work: \"lots\" is not a number of work done (e.g. 125000)");
        assertThat(reason(ended("Succeeded", "hetgpu.io/work: NaN").build())).startsWith("termination message hetgpu.io/work:: \"NaN\"");
        assertThat(reason(ended("Succeeded", "hetgpu.io/work: 0").build())).contains("expected above 0");
        assertThat(reason(ended("Succeeded", null).build())).startsWith("hetgpu.io/work: none");
        assertThat(reason(ended("Succeeded", null).editMetadata().removeFromAnnotations("hetgpu.io/workload").endMetadata().build()))
                .startsWith("hetgpu.io/workload: none");
        var backwards = ended("Succeeded", "hetgpu.io/work: 5").editStatus().editFirstContainerStatus().editState().editTerminated()
                .withFinishedAt("2025-12-31T00:00:00Z").endTerminated().endState().endContainerStatus().endStatus().build();
        assertThat(reason(backwards)).contains("before startedAt");
        var garbled = ended("Succeeded", "hetgpu.io/work: 5").editStatus().editFirstContainerStatus().editState().editTerminated()
                .withStartedAt("yesterday").endTerminated().endState().endContainerStatus().endStatus().build();
        assertThat(reason(garbled)).contains("startedAt \"yesterday\"");
    }

    @Test
    void onlyTheFirstFourKilobytesOfATerminationMessageAreRead() {
        var pod = ended("Succeeded", "x".repeat(PodRun.MAX_MESSAGE_CHARS) + "\nhetgpu.io/work: 5")
                .editMetadata().addToAnnotations("hetgpu.io/work", "72000").endMetadata().build();
        assertThat(sample(pod).work()).isEqualTo(72000);
    }
}
