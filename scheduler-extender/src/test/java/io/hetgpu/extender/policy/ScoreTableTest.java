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

    private static ScoreTable.Row row(String node, int score) {
        return new ScoreTable.Row(node, score, new double[] {score / 10.0}, null, "");
    }
}
