package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.Observation;
import io.hetgpu.extender.throughput.ThroughputLearner;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WorkReportingTest {

    /** A ps/worker job: a ps without GPUs and two 4-GPU workers, one on V100s and one on P100s. */
    private static final Job JOB = new Job(7, 0, false, Job.LOW_PRIORITY, "ResNet-18 (batch size 128)",
            List.of(new Job.Pod(0, "ps"), new Job.Pod(4, "worker"), new Job.Pod(4, "worker")), 3600, Set.of(), 0, 50, "");
    private static final EndedRun RUN = new EndedRun(JOB, List.of(new EndedRun.Pod(1, 4, "V100"), new EndedRun.Pod(2, 4, "P100")),
            1000, 900, 5000, false);

    @Test
    void withoutNoiseEachPodReportsItsShareOfTheJobsTrueWork() {
        var samples = new WorkReporting(0, 0).samples(RUN, 2.0, new Random(1));

        assertThat(samples).hasSize(2);
        for (var sample : samples) {
            assertThat(sample.workloadClass()).isEqualTo("resnet-18-bs128");
            assertThat(sample.gpus()).isEqualTo(4);
            assertThat(sample.runSeconds()).isEqualTo(1000);
            assertThat(sample.work()).isEqualTo(900 * 2.0 / 2);
            // Per GPU, a pod's figure is the job's: 1800 steps over 8 GPUs and 1000 s.
            assertThat(sample.throughputPerGpu()).isEqualTo(1800.0 / 8 / 1000);
        }
        assertThat(samples).extracting(sample -> sample.cardModel()).containsExactly("V100", "P100");
    }

    @Test
    void noiseIsLognormalWithTheGivenSigmaAndSeededAlike() {
        var reporting = new WorkReporting(0.1, 0);
        var logs = new double[2000];
        var random = new Random(11);
        for (int i = 0; i < logs.length / 2; i++) {
            var samples = reporting.samples(RUN, 2.0, random);
            logs[2 * i] = Math.log(samples.get(0).work() / 900);
            logs[2 * i + 1] = Math.log(samples.get(1).work() / 900);
        }
        double mean = java.util.Arrays.stream(logs).average().orElseThrow();
        double sd = Math.sqrt(java.util.Arrays.stream(logs).map(x -> (x - mean) * (x - mean)).sum() / logs.length);
        assertThat(mean).isBetween(-0.01, 0.01);
        assertThat(sd).isBetween(0.09, 0.11);
        assertThat(reporting.samples(RUN, 2.0, new Random(3))).isEqualTo(reporting.samples(RUN, 2.0, new Random(3)));
    }

    @Test
    void aBogusReportIsACrashedRunOrAnInflatedOneAndTheLearnerRefusesIt() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var honest = new WorkReporting(0.05, 0);
        var random = new Random(4);
        for (int i = 0; i < 10; i++) {
            honest.samples(RUN, 2.0, random).forEach(learner::observe);
        }
        var bogus = new WorkReporting(0.05, 1).samples(RUN, 2.0, new Random(5));
        int crashed = 0;
        for (int i = 0; i < 50; i++) {
            for (var sample : new WorkReporting(0.05, 1).samples(RUN, 2.0, random)) {
                boolean short_ = sample.runSeconds() < WorkReporting.CRASH_SECONDS;
                boolean inflated = sample.work() > 5 * 900;
                assertThat(short_ ^ inflated).as(sample.toString()).isTrue();
                crashed += short_ ? 1 : 0;
                assertThat(learner.observe(sample)).as(sample.toString()).isInstanceOf(Observation.Refused.class);
            }
        }
        assertThat(crashed).isBetween(30, 70);
        assertThat(bogus).hasSize(2);
    }

    @Test
    void aShareOrSigmaOutOfRangeIsRefusedNamingIt() {
        assertThatThrownBy(() -> new WorkReporting(-0.1, 0)).hasMessage("noiseSigma: expected 0 to 1, got -0.1");
        assertThatThrownBy(() -> new WorkReporting(0.1, 1.5)).hasMessage("bogusShare: expected 0 to 1, got 1.5");
    }
}
