package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ScoreTableTest {

    @Test
    void theBestRowIsTheOneRankedFirstTiesGoingToTheEarliest() {
        var table = new ScoreTable(List.of("tier"), List.of(row("a", 3), row("b", 7), row("c", 7), row("d", 0)));

        assertThat(table.best()).isSameAs(table.ranked().getFirst());
        assertThat(table.best().node()).isEqualTo("b");
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
            assertThat(table.bestFitting(count)).as("the best %d", count).containsExactlyElementsOf(ranked.subList(0, Math.min(count, ranked.size())));
        }
    }

    private static ScoreTable.Row row(String node, int score) {
        return new ScoreTable.Row(node, score, new double[] {score / 10.0}, null, "");
    }
}
