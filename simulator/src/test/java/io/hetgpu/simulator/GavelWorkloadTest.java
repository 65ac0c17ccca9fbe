package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class GavelWorkloadTest {

    private static final GavelThroughputs THROUGHPUTS = GavelThroughputs.shipped();
    private static final List<Job> JOBS = GavelWorkload.generate(2.4, 20_000, 1, THROUGHPUTS, List.of("rack-0", "rack-1"));

    private static double share(java.util.function.Predicate<Job> which) {
        return JOBS.stream().filter(which).count() / (double) JOBS.size();
    }

    @Test
    void gpuCountsFollowGavelsMix() {
        assertThat(share(job -> job.gpus() == 1)).isCloseTo(0.70, within(0.015));
        assertThat(share(job -> job.gpus() == 2)).isCloseTo(0.10, within(0.01));
        assertThat(share(job -> job.gpus() == 4)).isCloseTo(0.15, within(0.01));
        assertThat(share(job -> job.gpus() == 8)).isCloseTo(0.05, within(0.01));
        assertThat(JOBS.stream().filter(job -> job.gpus() == 8)).allMatch(Job::distributed).allMatch(job -> job.trafficGbPerHour() > 0);
    }

    @Test
    void arrivalsArePoissonAtTheRate() {
        double meanGap = JOBS.getLast().arrival() / JOBS.size();
        assertThat(meanGap).isCloseTo(3600 / 2.4, within(3600 / 2.4 * 0.03));
    }

    @Test
    void durationsAreLogUniformInTwoRanges() {
        assertThat(JOBS).allMatch(job -> job.work() >= Math.pow(10, 1.5) * 60 && job.work() <= Math.pow(10, 4) * 60);
        assertThat(share(job -> job.work() < 1000 * 60)).isCloseTo(0.8, within(0.015));
        double medianShortMinutes = JOBS.stream().filter(job -> job.work() < 1000 * 60).mapToDouble(job -> job.work() / 60).sorted()
                .skip(JOBS.stream().filter(job -> job.work() < 1000 * 60).count() / 2).findFirst().orElseThrow();
        assertThat(Math.log10(medianShortMinutes)).isCloseTo(2.25, within(0.05));
    }

    @Test
    void prioritiesAndTypes() {
        assertThat(share(Job::high)).isCloseTo(0.2, within(0.01));
        assertThat(JOBS.stream().map(Job::type).distinct().count()).isEqualTo(THROUGHPUTS.jobTypes().size());
        assertThat(THROUGHPUTS.jobTypes()).hasSize(26);
        // A multi-GPU job always has a type Gavel measured at its scale (19 of the 26), never a 1-GPU fallback.
        assertThat(JOBS.stream().filter(job -> job.gpus() > 1)).allMatch(job -> THROUGHPUTS.measuredAt(job.type(), job.gpus()));
        assertThat(JOBS.stream().filter(job -> job.gpus() > 1).map(Job::type).distinct().count()).isEqualTo(19);
    }

    @Test
    void speedsComeFromGavelsTable() {
        var speed = CardSpeed.gavel(THROUGHPUTS, "K80");
        var recommendation = new Job(0, 0, false, 0, "Recommendation (batch size 1024)", List.of(new Job.Pod(1, "")), 60,
                java.util.Set.of(), 0, 0, "");
        assertThat(speed.relative(recommendation, "K80")).isEqualTo(1.0);
        assertThat(speed.relative(recommendation, "V100")).isCloseTo(13.2826 / 20.0500, within(1e-3));
        // ResNet-50 at 2 GPUs has no K80 measurement (0 in Gavel's table): the 1-GPU ratio stands in.
        var resnet = new Job(1, 0, false, 0, "ResNet-50 (batch size 128)", List.of(new Job.Pod(2, "")), 60, java.util.Set.of(), 0, 0, "");
        assertThat(speed.relative(resnet, "V100")).isCloseTo(2.4968 / 0.3472, within(1e-3));
        assertThat(GavelThroughputs.workloadClass("ResNet-18 (batch size 128)")).isEqualTo("resnet-18-bs128");
        assertThatThrownBy(() -> CardSpeed.gavel(THROUGHPUTS, "A100")).hasMessageContaining("--reference");
        assertThatThrownBy(() -> GavelWorkload.generate(0, 1, 1, THROUGHPUTS, List.of("r"))).hasMessageContaining("--rate");
    }
}
