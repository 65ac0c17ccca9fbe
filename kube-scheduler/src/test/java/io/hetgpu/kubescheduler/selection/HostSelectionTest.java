package io.hetgpu.kubescheduler.selection;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostSelectionTest {

    @Test
    void theHighestScoreWinsWithoutConsultingTheTieBreak() {
        var selection = new HostSelection<String>(seen -> {
            throw new AssertionError("no tie here");
        });
        selection.offer("a", 10);
        selection.offer("b", 30);
        selection.offer("c", 20);
        assertThat(selection.chosen()).isEqualTo("b");
    }

    @Test
    void tiesAreOfferedToTheTieBreakWithHowManyShareTheBestScore() {
        var asked = new ArrayList<Integer>();
        var selection = new HostSelection<String>(seen -> {
            asked.add(seen);
            return seen == 3;
        });
        selection.offer("a", 50);
        selection.offer("b", 50);
        selection.offer("c", 50);
        selection.offer("d", 10);
        assertThat(asked).containsExactly(2, 3);
        assertThat(selection.chosen()).isEqualTo("c");
    }

    @Test
    void aHigherScoreRestartsTheCountOfTiedNodes() {
        var asked = new ArrayList<Integer>();
        var selection = new HostSelection<String>(seen -> asked.add(seen) && false);
        for (var node : List.of("a", "b")) {
            selection.offer(node, 5);
        }
        selection.offer("c", 9);
        selection.offer("d", 9);
        assertThat(asked).containsExactly(2, 2);
        assertThat(selection.chosen()).isEqualTo("c");
    }

    @Test
    void nothingOfferedChoosesNothing() {
        assertThat(new HostSelection<String>(seen -> true).chosen()).isNull();
    }
}
