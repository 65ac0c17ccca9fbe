package io.hetgpu.testcluster.draplacement;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.testcluster.demo.DemoCluster;
import io.hetgpu.testcluster.draplacement.DraPlacement.Claims;
import io.hetgpu.testcluster.draplacement.DraPlacement.Release;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The direction of the measurement, on one short mix: what docs/benchmarks.md reports at full size. */
class DraPlacementTest {

    private final DraPlacement placement = new DraPlacement(DraNodes.of(DemoCluster.nodes(), CardCatalog.defaults()), DraLimits.DEFAULTS);

    @Test
    void hetgpusClaimsPutMoreHighPriorityGpusOnTheNewestTierLowOnTheOldestAndMoreMultiGpuClaimsNvlinkConnectedThanFirstFitRefusingNoMore() {
        var jobs = PlacementJob.mix(1, 250, 20);
        var plain = placement.run(jobs, Claims.PLAIN, Release.PRIORITIZED_LIST_SCORE, 1);
        var hetgpu = placement.run(jobs, Claims.HETGPU, Release.PRIORITIZED_LIST_SCORE, 1);

        assertThat(plain.highGpus()).isPositive();
        assertThat(plain.multiGpuClaims()).isPositive();
        assertThat(hetgpu.highOnNewestShare()).isGreaterThan(plain.highOnNewestShare() + 0.15);
        // A claim of several GPUs names its generation before an NVLink set of a newer one, so low priority lands on
        // the oldest cards too.
        assertThat(hetgpu.lowOnOldestShare()).isGreaterThan(plain.lowOnOldestShare() + 0.15);
        // Within a generation an NVLink set first, then any of its GPUs: more claims on one set than first fit, and no
        // more refused.
        assertThat(hetgpu.multiNvlinkShare()).isGreaterThan(plain.multiNvlinkShare() + 0.15);
        assertThat(plain.multiNvlinkShare()).isLessThan(0.5);
        assertThat(hetgpu.refusedMultiGpu()).isLessThanOrEqualTo(plain.refusedMultiGpu());
    }

    @Test
    void withoutKubeSchedulersDraScoreTheTierOrderDoesNotChooseTheNode() {
        // Each demo node has one card model, so a claim's tier list picks the node only through the 1.35+ score.
        var jobs = PlacementJob.mix(2, 250, 20);
        var unscored = placement.run(jobs, Claims.HETGPU, Release.NO_DRA_SCORE, 2);
        var scored = placement.run(jobs, Claims.HETGPU, Release.PRIORITIZED_LIST_SCORE, 2);
        assertThat(scored.highOnNewestShare()).isGreaterThan(unscored.highOnNewestShare() + 0.15);
    }

    @Test
    void optionsOutsideTheirBoundsAreOneLineAndStatusTwo() {
        var out = new StringWriter();
        var err = new StringWriter();
        var commandLine = io.hetgpu.testcluster.cli.TestClusterMain.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));

        assertThat(commandLine.execute("dra-placement", "--seeds", "1000")).isEqualTo(2);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString().lines().toList()).singleElement().asString().contains("--seeds 1..100", "got 2000, 1000 and 20");
    }

    @Test
    void theReportNamesEachWayAndItsFigures() {
        var out = new StringWriter();
        DraPlacementCommand.print(new PrintWriter(out), placement.compare(1, 50, 20), 50);
        assertThat(out.toString()).contains("50 pods", "plain claims, first fit", "hetgpu's claims, 1.34 (no DRA score)",
                "hetgpu's claims, 1.35+ (DRA score)", "refused");
    }
}
