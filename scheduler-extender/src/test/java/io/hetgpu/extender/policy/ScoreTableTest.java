package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ScoreTableTest {

    @Test
    void theBestRowIsTheOneRankedFirstTiesGoingToTheEarliest() {
        var table = new ScoreTable(List.of("tier"), List.of(row("a", 3), row("b", 7), row("c", 7), row("d", 0)));

        assertThat(table.best().node()).isEqualTo(table.ranked().getFirst().node()).isEqualTo("b");
        assertThat(table.best().score()).isEqualTo(7);
        assertThat(table.best().parts()).containsExactly(0.7);
        assertThat(new ScoreTable(List.of(), List.of()).best()).isNull();
    }

    @Test
    void theBestFittingRowsAreTheFirstFittingOnesRankedWithoutASort() {
        var pod = io.hetgpu.extender.TestPods.gpus(2);
        var nodes = new java.util.ArrayList<io.hetgpu.extender.model.NodeState>();
        for (int i = 0; i < 3; i++) {
            // Alike nodes score alike: ties, which keep request order; CPU nodes do not fit.
            nodes.add(io.hetgpu.extender.TestNodes.gpu("k80-" + i, io.hetgpu.extender.TestTopologies::k80x4));
            nodes.add(io.hetgpu.extender.TestNodes.cpu("cpu-" + i));
            nodes.add(io.hetgpu.extender.TestNodes.gpu("v100-" + i, io.hetgpu.extender.TestTopologies::dgx1V100));
            nodes.add(io.hetgpu.extender.TestNodes.gpu("h100-" + i, io.hetgpu.extender.TestTopologies::dgxH100));
        }
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS), pod, nodes,
                io.hetgpu.extender.model.PlacementContext.EMPTY);
        var ranked = table.ranked().stream().filter(row -> row.candidate() != null).toList();

        assertThat(ranked.stream().map(ScoreTable.Row::score).distinct().count()).as("ties among the fitting rows").isLessThan(ranked.size());
        assertThat(ranked).hasSizeLessThan(table.rows().size());
        for (int count = 0; count <= ranked.size() + 1; count++) {
            assertThat(table.bestFitting(count)).as("the best %d", count)
                    .usingRecursiveFieldByFieldElementComparator()
                    .containsExactlyElementsOf(ranked.subList(0, Math.min(count, ranked.size())));
        }
    }

    @Test
    void refusedNodesKeepTheirPlaceReasonAndNoPartsBetweenTheScoredOnes() {
        var pod = io.hetgpu.extender.TestPods.gpus(2);
        var nodes = java.util.List.of(io.hetgpu.extender.TestNodes.cpu("cpu-0"),
                io.hetgpu.extender.TestNodes.gpu("v100-0", io.hetgpu.extender.TestTopologies::dgx1V100),
                io.hetgpu.extender.TestNodes.cpu("cpu-1"),
                io.hetgpu.extender.TestNodes.gpu("h100-0", io.hetgpu.extender.TestTopologies::dgxH100));
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS);
        var assessments = policy.assessAll(pod, nodes, HighPriorityReserve.ClosedTier.NONE);
        var table = policy.score(pod, assessments, io.hetgpu.extender.model.PlacementContext.EMPTY);
        var fitting = policy.scoreCandidates(pod, java.util.List.of(((PlacementPolicy.Fit) assessments.get(1)).candidate(),
                ((PlacementPolicy.Fit) assessments.get(3)).candidate()), io.hetgpu.extender.model.PlacementContext.EMPTY);

        assertThat(table.rows()).extracting(ScoreTable.Row::node).containsExactly("cpu-0", "v100-0", "cpu-1", "h100-0");
        assertThat(table.refusedCount()).isEqualTo(2);
        for (int refused : new int[] {0, 2}) {
            assertThat(table.row(refused).candidate()).isNull();
            assertThat(table.row(refused).parts()).isEmpty();
            assertThat(table.row(refused).rejection()).isEqualTo(((PlacementPolicy.Misfit) assessments.get(refused)).rejection().reason());
            assertThat(table.score(refused)).isZero();
        }
        for (int i = 0; i < 2; i++) {
            var row = table.row(1 + 2 * i);
            assertThat(row).usingRecursiveComparison().isEqualTo(fitting.row(i));
            assertThat(row.parts()).hasSize(table.scorers().size());
            assertThat(row.rejection()).isEmpty();
        }
        assertThat(table.best().node()).isEqualTo("h100-0");
    }

    private static ScoreTable.Row row(String node, int score) {
        return new ScoreTable.Row(node, score, new double[] {score / 10.0}, null, "");
    }
}
