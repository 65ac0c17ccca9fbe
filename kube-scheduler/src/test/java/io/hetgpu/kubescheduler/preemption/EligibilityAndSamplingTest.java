package io.hetgpu.kubescheduler.preemption;

import static io.hetgpu.kubescheduler.preemption.Pods.kubeFit;
import static io.hetgpu.kubescheduler.preemption.Pods.node;
import static io.hetgpu.kubescheduler.preemption.Pods.preemptor;
import static io.hetgpu.kubescheduler.preemption.Pods.running;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.SchedulingPod;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EligibilityAndSamplingTest {

    @Test
    void aPodThatNeverPreemptsIsNotEligible() {
        var never = new Preemptor("u", SchedulingPod.requesting(Pods.gpus(1)), 1000, true, "");
        assertThat(Eligibility.check(never, Map.of(), false)).contains("not eligible due to preemptionPolicy=Never.");
        assertThat(Eligibility.check(preemptor(1000, 1), Map.of(), false)).isEmpty();
    }

    @Test
    void aPodWaitsForTheVictimsItAlreadyEvictedOnItsNominatedNode() {
        var nominated = new Preemptor("u", SchedulingPod.requesting(Pods.gpus(1)), 1000, false, "n1");
        var terminating = new RunningPod("v", "ml", Map.of(), 0, Pods.T0, Pods.gpus(1), true);
        assertThat(Eligibility.check(nominated, Map.of("n1", List.of(terminating)), false)).isPresent();
        // Not when the terminating pod is not of lower priority, nor when the nominated node can no longer take it.
        var peer = new RunningPod("p", "ml", Map.of(), 1000, Pods.T0, Pods.gpus(1), true);
        assertThat(Eligibility.check(nominated, Map.of("n1", List.of(peer)), false)).isEmpty();
        assertThat(Eligibility.check(nominated, Map.of("n1", List.of(terminating)), true)).isEmpty();
    }

    @Test
    void tenPercentOfTheNodesButAtLeastAHundredAndAtMostAll() {
        assertThat(CandidateSampling.DEFAULTS.numCandidates(50)).isEqualTo(50);
        assertThat(CandidateSampling.DEFAULTS.numCandidates(500)).isEqualTo(100);
        assertThat(CandidateSampling.DEFAULTS.numCandidates(5000)).isEqualTo(500);
    }

    @Test
    void theWalkStopsOnceEnoughCandidatesAreFoundStartingAtTheOffset() {
        // Five full 2-GPU nodes, each with one low pod; sampling of at least 2: from offset 3, n3 and n4 are found.
        var nodes = new ArrayList<SchedulingNode>();
        var pods = new HashMap<String, List<RunningPod>>();
        for (int i = 0; i < 5; i++) {
            nodes.add(node("n" + i, 2));
            pods.put("n" + i, List.of(running("low-" + i, 0, 2, i)));
        }
        var urgent = preemptor(1000, 2);
        var found = Candidates.find(urgent, nodes, pods, List.of(), kubeFit(urgent), new CandidateSampling(10, 2), 3);
        assertThat(found.keySet()).containsExactly("n3", "n4");
    }

    @Test
    void candidatesThatBreakNoBudgetComeFirst() {
        var nodes = List.of(node("guarded", 2), node("free", 2));
        var pods = Map.of("guarded", List.of(running("job-0", 0, 2, 0)), "free", List.of(running("other-0", 0, 2, 0)));
        var budget = new DisruptionBudget("ml", Map.of("job", "job"), 0, java.util.Set.of());
        var urgent = preemptor(1000, 2);
        var found = Candidates.find(urgent, nodes, pods, List.of(budget), kubeFit(urgent), CandidateSampling.DEFAULTS, 0);
        assertThat(found.keySet()).containsExactly("free", "guarded");
        assertThat(NodePick.pickOne(found)).isEqualTo("free");
    }
}
