package io.hetgpu.kubescheduler.preemption;

import static io.hetgpu.kubescheduler.preemption.Pods.kubeFit;
import static io.hetgpu.kubescheduler.preemption.Pods.node;
import static io.hetgpu.kubescheduler.preemption.Pods.preemptor;
import static io.hetgpu.kubescheduler.preemption.Pods.running;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class VictimSelectionTest {

    private final Preemptor urgent = preemptor(1000, 4);

    @Test
    void aNodeWhereEvenEvictingEveryLowerPodLeavesNoRoomIsNoCandidate() {
        // 8 GPUs: 6 held at priority 1000 (not evictable by an equal), 2 at priority 0: at most 2 freed, 4 wanted.
        var pods = List.of(running("peer-0", 1000, 6, 0), running("low-0", 0, 2, 0));
        assertThat(VictimSelection.onNode(urgent, node("n", 8), pods, List.of(), kubeFit(urgent))).isEmpty();
    }

    @Test
    void theMostImportantPodsAreGivenBackFirstSoTheLeastImportantGo() {
        // 8 GPUs full with four 2-GPU pods; freeing 4 needs two evictions. Given back in order (priority 100 started
        // at minute 0, priority 100 at minute 5, priority 10, priority 0): the first two fit back, the last two go.
        var pods = List.of(running("low-0", 0, 2, 0), running("mid-0", 10, 2, 0), running("old-0", 100, 2, 0), running("new-0", 100, 2, 5));
        var victims = VictimSelection.onNode(urgent, node("n", 8), pods, List.of(), kubeFit(urgent)).orElseThrow();
        assertThat(victims.pods()).extracting(RunningPod::uid).containsExactly("mid-0", "low-0");
        assertThat(victims.pdbViolations()).isZero();
    }

    @Test
    void podsABudgetProtectsAreGivenBackBeforeTheOthers() {
        // Same node; the budget allows no disruption of "mid": it is reprieved first, so low-0 and old-0's peer go instead.
        var pods = List.of(running("low-0", 0, 2, 0), running("mid-0", 10, 2, 0), running("old-0", 100, 2, 0), running("new-0", 100, 2, 5));
        var budget = new DisruptionBudget("ml", Map.of("job", "mid"), 0, Set.of());
        var victims = VictimSelection.onNode(urgent, node("n", 8), pods, List.of(budget), kubeFit(urgent)).orElseThrow();
        // Order given back: mid-0 (violating group), then old-0, new-0, low-0: mid-0, old-0 fit; new-0 and low-0 go.
        assertThat(victims.pods()).extracting(RunningPod::uid).containsExactly("new-0", "low-0");
        assertThat(victims.pdbViolations()).isZero();
    }

    @Test
    void aBudgetBrokenAnywayIsCounted() {
        // 4 GPUs, two 2-GPU pods of one job under a budget allowing one disruption: both must go, one breaks it.
        var pods = List.of(running("job-0", 0, 2, 0), running("job-1", 0, 2, 1));
        var budget = new DisruptionBudget("ml", Map.of("job", "job"), 1, Set.of());
        var victims = VictimSelection.onNode(urgent, node("n", 4), pods, List.of(budget), kubeFit(urgent)).orElseThrow();
        assertThat(victims.pods()).hasSize(2);
        assertThat(victims.pdbViolations()).isEqualTo(1);
    }

    @Test
    void aPodTheBudgetAlreadyCountsAsDisruptedCostsItNothing() {
        var pods = List.of(running("job-0", 0, 2, 0), running("job-1", 0, 2, 1));
        var budget = new DisruptionBudget("ml", Map.of("job", "job"), 1, Set.of("job-0"));
        var victims = VictimSelection.onNode(urgent, node("n", 4), pods, List.of(budget), kubeFit(urgent)).orElseThrow();
        assertThat(victims.pdbViolations()).isZero();
    }

    @Test
    void theExtendersFilterDecidesTooWhenTheCallerComposesIt() {
        // kube-scheduler alone would evict one 2-GPU pod of two; an extender that wants the whole node free makes it both.
        var pods = List.of(running("a-0", 0, 2, 0), running("b-0", 0, 2, 1));
        var two = preemptor(1000, 2);
        VictimSelection.Fit wholeNode = (node, left) -> kubeFit(two).fits(node, left) && left.isEmpty();
        assertThat(VictimSelection.onNode(two, node("n", 4), pods, List.of(), kubeFit(two)).orElseThrow().pods()).hasSize(1);
        assertThat(VictimSelection.onNode(two, node("n", 4), pods, List.of(), wholeNode).orElseThrow().pods()).hasSize(2);
    }
}
