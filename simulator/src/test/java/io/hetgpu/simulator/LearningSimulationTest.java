package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearningSettings;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The simulator learns as the extender does: from what jobs report when their pods end, never from Gavel's table. */
class LearningSimulationTest {

    private static final GavelThroughputs THROUGHPUTS = GavelThroughputs.shipped();
    private static final ClusterInventory GAVEL = ClusterInventory.gavel();

    private static Experiment gavel(int jobs, double rate, long seed) {
        var racks = GAVEL.nodes().stream().map(SimNode::rack).distinct().sorted().toList();
        return new Experiment("gavel", GAVEL, GavelWorkload.generate(rate, jobs, seed, THROUGHPUTS, racks),
                CardSpeed.gavel(THROUGHPUTS, "V100"), THROUGHPUTS.asWorkloadTable());
    }

    @Test
    void theLearnedTableApproachesTheSpeedsJobsTrulyRunAtWithoutThePolicyEverReadingThem() {
        var experiment = gavel(800, 2.4, 5);
        // No oracle: the policy is built from the shipped settings and the learner alone; only the jobs' own reports
        // (their true work with noise, and 2 % bogus ones) reach the learner.
        var setup = new Learning.Setup(LearningSettings.DEFAULTS, WorkReporting.DEFAULTS,
                job -> THROUGHPUTS.stepsPerSecond(job.type(), job.gpus(), "V100"), WorkloadThroughputs.NONE, Double.NaN);
        var learning = new Learning(setup, WorkloadThroughputs.NONE, 5);
        var placer = new HetgpuPlacer("hetgpu", ExtenderConfig.DEFAULTS.policy(), learning, 5);

        var result = new Simulation(GAVEL, experiment.speed()).run(experiment.jobs(), placer);

        assertThat(result.runs()).hasSize(800);
        var figures = placer.learned();
        assertThat(figures.completedJobs()).as("every completed job reached the learner").isEqualTo(800);
        assertThat(figures.refused()).as("the bogus reports, and evicted runs too short to measure").isPositive();
        var learned = learning.learner().table();
        var truth = THROUGHPUTS.asWorkloadTable().table();
        int ranked = 0;
        int within = 0;
        for (var entry : truth.entrySet()) {
            var row = learned.byClass().get(entry.getKey());
            assertThat(row).as(entry.getKey()).isNotNull();
            var speeds = new HashMap<String, Double>();
            row.forEach((card, speed) -> speeds.put(card, speed.throughputPerGpu()));
            for (var card : entry.getValue().keySet()) {
                // No inflated report moved a figure up: each is at most 1.5x the true 1-GPU speed. Multi-GPU runs, which
                // scale below linear (LM on 4 P100s: 40 % of its 1-GPU speed per GPU), pull some figures well below it.
                assertThat(speeds.get(card) / entry.getValue().get(card)).as(entry.getKey() + " on " + card).isBetween(0.3, 1.5);
            }
            ranked += Learning.ranked(speeds, entry.getValue()) ? 1 : 0;
            within += Learning.within(speeds, entry.getValue(), 0.25) ? 1 : 0;
        }
        // After 800 jobs most classes rank the cards as they truly run, and half have every ratio within 25 %.
        assertThat(ranked).isGreaterThanOrEqualTo(truth.size() * 2 / 3);
        assertThat(within).isGreaterThanOrEqualTo(truth.size() / 2);
    }

    @Test
    void aClassIsRankedWhenCardsTheTruthTellsApartAreInItsOrder() {
        var truth = Map.of("K80", 1.0, "P100", 5.0, "V100", 5.2);
        assertThat(Learning.ranked(Map.of("K80", 2.0, "P100", 6.0, "V100", 5.5), truth)).as("P100 and V100 within 10 %: a tie").isTrue();
        assertThat(Learning.ranked(Map.of("K80", 7.0, "P100", 6.0, "V100", 5.5), truth)).isFalse();
        assertThat(Learning.ranked(Map.of("K80", 1.0, "P100", 5.0), truth)).as("a card missing").isFalse();
    }

    @Test
    void aClasssFastestCardIsRightWhenTheCardItRanksFirstRunsWithinTheToleranceOfTheFastest() {
        var truth = Map.of("K80", 1.0, "P100", 5.0, "V100", 5.2);
        assertThat(Learning.fastestRight(Map.of("K80", 1.0, "P100", 9.0, "V100", 5.0), truth)).as("P100 within 10 % of V100").isTrue();
        assertThat(Learning.fastestRight(Map.of("K80", 9.0, "P100", 5.0, "V100", 5.0), truth)).isFalse();
    }

    @Test
    void aClassIsWithinWhenEveryRatioBetweenTwoCardsIsWithinTheTolerance() {
        var truth = Map.of("K80", 1.0, "V100", 4.0);
        assertThat(Learning.within(Map.of("K80", 10.0, "V100", 43.0), truth, 0.10)).as("another unit, the same ratio ±8 %").isTrue();
        assertThat(Learning.within(Map.of("K80", 10.0, "V100", 45.0), truth, 0.10)).isFalse();
        assertThat(Learning.within(Map.of("K80", 10.0, "V100", 35.0), truth, 0.10)).isFalse();
    }

    @Test
    void hetgpuAsShippedLearnsWhereTheExperimentLearnsAndTheOracleNever() {
        var on = gavel(60, 2.4, 2).withLearning(Learning.Setup.gavel(LearningSettings.DEFAULTS, WorkReporting.DEFAULTS, THROUGHPUTS, "V100"));
        var summaries = on.run(2, name -> name.equals("hetgpu") || name.equals("hetgpu-workload-aware"));
        var byName = new HashMap<String, Summary>();
        summaries.forEach(summary -> byName.put(summary.policy(), summary));
        assertThat(byName.get("hetgpu").learned().learned()).isTrue();
        assertThat(byName.get("hetgpu").learned().completedJobs()).isEqualTo(60);
        assertThat(byName.get("hetgpu-workload-aware").learned()).isEqualTo(Learning.Figures.NONE);

        var off = gavel(60, 2.4, 2).withLearning(Learning.Setup.OFF).run(2, name -> name.equals("hetgpu"));
        assertThat(off.stream().filter(summary -> summary.policy().equals("hetgpu")).findFirst().orElseThrow().learned())
                .isEqualTo(Learning.Figures.NONE);
    }
}
