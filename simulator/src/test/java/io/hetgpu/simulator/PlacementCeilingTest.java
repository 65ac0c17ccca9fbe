package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PlacementCeilingTest {

    private static final GavelThroughputs THROUGHPUTS = GavelThroughputs.shipped();
    private static final ClusterInventory GAVEL = ClusterInventory.gavel();
    private static final CardSpeed SPEED = CardSpeed.gavel(THROUGHPUTS, "K80");

    private static Job job(String type, List<Job.Pod> pods, Set<String> models) {
        return new Job(0, 0, true, Job.HIGH_PRIORITY, type, pods, 3600, models, 0, 0, "");
    }

    @Test
    void aJobsBestRateIsItsFastestCardTimesTheBestLayoutAnyNodeOffers() {
        var resnet = "ResNet-50 (batch size 64)";
        double v100 = SPEED.relative(job(resnet, List.of(new Job.Pod(1, "")), Set.of()), "V100");
        assertThat(PlacementCeiling.fastestRate(job(resnet, List.of(new Job.Pod(1, "")), Set.of()), GAVEL, SPEED, CommunicationModel.DEFAULTS)).isEqualTo(v100);
        // Recommendation runs fastest on a P100, not on the newest card.
        var recommendation = job("Recommendation (batch size 2048)", List.of(new Job.Pod(1, "")), Set.of());
        assertThat(PlacementCeiling.fastestRate(recommendation, GAVEL, SPEED, CommunicationModel.DEFAULTS)).isEqualTo(SPEED.relative(recommendation, "P100"));
        // A job limited to K80s gets the K80 speed; its 4 GPUs on a k80-4x node talk over PCIe.
        var k80Only = job(resnet, List.of(new Job.Pod(4, "")), Set.of("K80"));
        assertThat(PlacementCeiling.fastestRate(k80Only, GAVEL, SPEED, CommunicationModel.DEFAULTS)).isCloseTo(1.0 * CommunicationModel.DEFAULTS.pcieSet(), within(1e-9));
        // Two 4-GPU workers fit one DGX-1: one node, but two pods, so not one NVLink set.
        var psWorker = job(resnet, List.of(new Job.Pod(0, "ps"), new Job.Pod(4, "worker"), new Job.Pod(4, "worker")), Set.of());
        assertThat(PlacementCeiling.fastestRate(psWorker, GAVEL, SPEED, CommunicationModel.DEFAULTS))
                .isCloseTo(Math.max(SPEED.relative(psWorker, "V100"), SPEED.relative(psWorker, "P100")) * CommunicationModel.DEFAULTS.pcieSet(),
                        within(1e-9));
        assertThat(PlacementCeiling.fastestRate(job(resnet, List.of(new Job.Pod(1, "")), Set.of("H100")), GAVEL, SPEED, CommunicationModel.DEFAULTS)).isZero();
    }

    @Test
    void noPolicyBeatsTheCeiling() {
        var racks = GAVEL.nodes().stream().map(SimNode::rack).distinct().sorted().toList();
        var jobs = GavelWorkload.generate(2.4, 1500, 4, THROUGHPUTS, racks);
        var ceiling = PlacementCeiling.of(jobs, GAVEL, SPEED);
        assertThat(ceiling.unplaceable()).isZero();
        assertThat(ceiling.offeredLoad()).isBetween(0.0, 1.0);
        for (var summary : new Experiment("gavel", GAVEL, jobs, SPEED, THROUGHPUTS.asWorkloadTable()).run(4)) {
            assertThat(summary.meanJctHigh()).as(summary.policy()).isGreaterThanOrEqualTo(ceiling.meanJctHigh());
            assertThat(summary.meanJctOther()).as(summary.policy()).isGreaterThanOrEqualTo(ceiling.meanJctRest());
            assertThat(summary.meanJct()).as(summary.policy()).isGreaterThanOrEqualTo(ceiling.meanJct());
        }
    }

    @Test
    void aTraceThatAsksForMoreThanTheClusterHasIsOverloadedWhateverTheScheduler() {
        var long8 = new Job(0, 0, false, Job.NORMAL_PRIORITY, "ResNet-50 (batch size 64)", List.of(new Job.Pod(8, "")), 1e6, Set.of(), 0, 0, "");
        var jobs = List.of(long8, new Job(1, 3600, false, Job.NORMAL_PRIORITY, "A3C", List.of(new Job.Pod(1, "")), 60, Set.of(), 0, 0, ""));
        assertThat(PlacementCeiling.of(jobs, GAVEL, SPEED).offeredLoad()).isGreaterThan(1);
        assertThat(PlacementCeiling.of(jobs, GAVEL, SPEED).meanJctHigh()).isZero();
    }

    @Test
    void aJobThatCannotHaveNvlinkIsAsFastAsTheCommunicationModelSays() {
        var k80Only = job("ResNet-50 (batch size 64)", List.of(new Job.Pod(4, "")), Set.of("K80"));
        var slower = new CommunicationModel(0.5, 0.4, 0.3);
        assertThat(PlacementCeiling.fastestRate(k80Only, GAVEL, SPEED, slower)).isCloseTo(1.0 * 0.5, within(1e-9));
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> CommunicationModel.parse("0.85,fast,0.6")))
                .hasMessage("--communication: expected PCIE,RACK,CROSS factors such as 0.85,0.75,0.6, got \"0.85,fast,0.6\"");
        assertThat(CommunicationModel.parse(CommunicationModel.DEFAULTS.toString())).isEqualTo(CommunicationModel.DEFAULTS);
    }
}
