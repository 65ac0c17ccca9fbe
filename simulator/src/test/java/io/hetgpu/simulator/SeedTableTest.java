package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The per-seed report: speed-ups against each seed's own baseline, and their spread. */
class SeedTableTest {

    private static Summary summary(String policy, double high, double all) {
        return new Summary(policy, 100, high, 0, 0, 0, all, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void eachSeedIsComparedWithItsOwnBaselineAndTheSpreadIsOverSeeds() {
        var bySeed = new TreeMap<Long, List<Summary>>(Map.of(
                1L, List.of(summary("kubernetes-default", 40, 200), summary("hetgpu", 20, 100)),
                2L, List.of(summary("kubernetes-default", 30, 100), summary("hetgpu", 20, 125)),
                3L, List.of(summary("kubernetes-default", 50, 100), summary("hetgpu", 10, 50))));
        var ceiling = new PlacementCeiling(10, 10, 10, 0.5, 0);

        var table = Report.seedTable(bySeed, Map.of(1L, ceiling, 2L, ceiling, 3L, ceiling));

        assertThat(table.lines()).contains(
                "| policy (high × / all ×) |         seed 1 |         seed 2 |         seed 3 |",
                "| hetgpu                  |  2.00× / 2.00× |  1.50× / 0.80× |  5.00× / 2.00× |",
                "| ceiling (any scheduler) | 4.00× / 20.00× | 3.00× / 10.00× | 5.00× / 10.00× |",
                "| policy                  | least high × | median |  most |",
                "| hetgpu                  |        1.50× |  2.00× | 5.00× |",
                "| ceiling (any scheduler) |        3.00× |  4.00× | 5.00× |");
    }

    @Test
    void eachPolicyIsMeasuredAgainstTheCeilingAndTheBaselinesPreemptionLosses() {
        // Two seeds: hetgpu 10 % and 30 % above the ceiling's high-priority JCT of 10 h; all jobs 2x and 4x; it loses
        // fewer GPU-hours than the baseline on seed 1 only.
        var bySeed = new TreeMap<Long, List<Summary>>(Map.of(
                1L, List.of(lossy("kubernetes-default", 40, 200, 100, 500), lossy("hetgpu", 11, 100, 80, 400)),
                2L, List.of(lossy("kubernetes-default", 40, 200, 100, 500), lossy("hetgpu", 13, 50, 120, 600))));
        var ceiling = new PlacementCeiling(10, 10, 10, 0.5, 0);

        var table = Report.seedTable(bySeed, Map.of(1L, ceiling, 2L, ceiling));

        assertThat(table.lines()).contains(
                "| hetgpu             |    +20.0 % |  +30.0 % | 3.00× | 2.00× |      1 of 2 |",
                "| hetgpu                        |  80 / 400 | 120 / 600 |");
    }

    private static Summary lossy(String policy, double high, double all, int evicted, double lost) {
        return new Summary(policy, 100, high, 0, 0, 0, all, 0, 0, 0, 0, 0, 0, 0, evicted, lost, 0, 0);
    }

    private static Summary halfPlacing(String policy, double high, double all, double lost, Summary.HalfPlacedJobs halfPlaced) {
        return new Summary(policy, 100, high, 0, 0, 0, all, 0, 0, 0, 0, 0, 0, 0, 0, lost, 0, 0, new TreeMap<>(), new TreeMap<>(), halfPlaced);
    }

    @Test
    void eachPolicyIsAlsoComparedWithTheWholeWorkloadBaselineAndItsHalfPlacedJobsAreCounted() {
        var none = Summary.HalfPlacedJobs.NONE;
        var bySeed = new TreeMap<Long, List<Summary>>(Map.of(
                1L, List.of(halfPlacing("kubernetes-default", 40, 400, 100, new Summary.HalfPlacedJobs(30, 25, 1234.4, 50)),
                        halfPlacing(KubernetesDefaultPlacer.WHOLE_WORKLOAD, 30, 300, 100, none), halfPlacing("hetgpu", 15, 100, 90, none)),
                2L, List.of(halfPlacing("kubernetes-default", 40, 400, 100, new Summary.HalfPlacedJobs(20, 12, 999.6, 40)),
                        halfPlacing(KubernetesDefaultPlacer.WHOLE_WORKLOAD, 30, 200, 100, none), halfPlacing("hetgpu", 20, 50, 110, none))));
        var ceiling = new PlacementCeiling(10, 10, 10, 0.5, 0);

        var table = Report.seedTable(bySeed, Map.of(1L, ceiling, 2L, ceiling));

        // Against the whole-workload baseline: high 2x and 1.5x, all 3x and 4x; hetgpu lost fewer GPU-hours on seed 1 only.
        assertThat(table.lines()).contains(
                "| hetgpu                            |  1.75× | 1.50× | 3.50× | 3.00× |       1 of 2 |",
                "| policy (jobs / > deadline / GPU-h) |         seed 1 |         seed 2 |",
                "| kubernetes-default                 | 30 / 25 / 1234 | 20 / 12 / 1000 |",
                "| hetgpu                             |      0 / 0 / 0 |      0 / 0 / 0 |");
    }

    @Test
    void tenSeedsOfTheLongestPolicyNameStayWithinOneHundredColumns() {
        var bySeed = new TreeMap<Long, List<Summary>>();
        var ceilings = new java.util.HashMap<Long, PlacementCeiling>();
        for (long seed = 1; seed <= 10; seed++) {
            bySeed.put(seed, List.of(summary("kubernetes-default", 45.75, 202.08), summary("hetgpu-workload-aware-min0.35-reserve10", 10.5, 147.5)));
            ceilings.put(seed, new PlacementCeiling(15.26, 15.3, 15.53, 0.9, 0));
        }

        var table = Report.seedTable(bySeed, ceilings);

        assertThat(table.lines()).allSatisfy(line -> assertThat(line.length()).as(line).isLessThanOrEqualTo(100));
        assertThat(table).contains(" seed 10 |");
    }

    @Test
    void aSeedRangeIsFromDotDotTo() {
        assertThat(SimulatorMain.range("1..10")).containsExactly(1, 10);
        assertThat(SimulatorMain.range("7..7")).containsExactly(7, 7);
        assertThatThrownBy(() -> SimulatorMain.range("10..1")).hasMessage("--seeds: expected FROM..TO with FROM <= TO, such as 1..10, got \"10..1\"");
        assertThatThrownBy(() -> SimulatorMain.range("1-10")).hasMessageContaining("got \"1-10\"");
    }
}
