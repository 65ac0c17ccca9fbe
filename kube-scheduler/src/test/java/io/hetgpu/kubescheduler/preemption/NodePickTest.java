package io.hetgpu.kubescheduler.preemption;

import static io.hetgpu.kubescheduler.preemption.Pods.running;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each criterion of pickOneNodeForPreemption deciding when the ones before it tie. */
class NodePickTest {

    private static Map<String, Victims> candidates(Object... nodesAndVictims) {
        var map = new LinkedHashMap<String, Victims>();
        for (int i = 0; i < nodesAndVictims.length; i += 2) {
            map.put((String) nodesAndVictims[i], (Victims) nodesAndVictims[i + 1]);
        }
        return map;
    }

    @Test
    void fewestBudgetViolationsFirst() {
        var cheap = new Victims(List.of(running("a", 500, 1, 0)), 0);
        var breaking = new Victims(List.of(running("b", 0, 1, 0)), 1);
        assertThat(NodePick.pickOne(candidates("n1", breaking, "n2", cheap))).isEqualTo("n2");
    }

    @Test
    void thenTheLowestHighestVictimPriority() {
        var high = new Victims(List.of(running("a", 500, 1, 0)), 0);
        var low = new Victims(List.of(running("b", 100, 1, 0), running("c", 100, 1, 0), running("d", 100, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("n1", high, "n2", low))).isEqualTo("n2");
    }

    @Test
    void thenTheLowestSumOfPriorities() {
        // Both highest 100; sums (offset by 2^31 each): two pods of 100 and 0 beat one of 100 and two of 0? No:
        // n1 = (100+2^31) + (0+2^31), n2 = (100+2^31) + (-50+2^31): n2 is lower.
        var n1 = new Victims(List.of(running("a", 100, 1, 0), running("b", 0, 1, 0)), 0);
        var n2 = new Victims(List.of(running("c", 100, 1, 0), running("d", -50, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("n1", n1, "n2", n2))).isEqualTo("n2");
    }

    @Test
    void theOffsetMakesMoreVictimsCostMoreEvenAtNegativePriorities() {
        // Without the 2^31 offset, two pods at -100 would sum below one at -100; with it, one victim is cheaper.
        var one = new Victims(List.of(running("a", -100, 1, 0)), 0);
        var two = new Victims(List.of(running("b", -100, 1, 0), running("c", -100, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("two", two, "one", one))).isEqualTo("one");
    }

    @Test
    void thenTheLatestStartOfTheHighestPriorityVictims() {
        // Same counts and priorities: the node whose top victims started later loses less work.
        var early = new Victims(List.of(running("a", 100, 1, 0), running("b", 0, 1, 30)), 0);
        var late = new Victims(List.of(running("c", 100, 1, 20), running("d", 0, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("early", early, "late", late))).isEqualTo("late");
    }

    @Test
    void candidatesWithoutVictimsTieWithoutOverflowAndBeatOnesWithVictims() {
        // A victimless candidate's start is Instant.MAX, which is past what epoch milliseconds in a long can hold.
        var none = new Victims(List.of(), 0);
        var some = new Victims(List.of(running("a", -100, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("some", some, "free-1", none, "free-2", new Victims(List.of(), 0)))).isEqualTo("free-1");
    }

    @Test
    void thenTheFirst() {
        var same = new Victims(List.of(running("a", 100, 1, 0)), 0);
        var again = new Victims(List.of(running("b", 100, 1, 0)), 0);
        assertThat(NodePick.pickOne(candidates("first", same, "second", again))).isEqualTo("first");
        assertThat(NodePick.pickOne(Map.of())).isEmpty();
    }
}
