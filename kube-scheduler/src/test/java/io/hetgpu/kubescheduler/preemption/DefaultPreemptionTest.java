package io.hetgpu.kubescheduler.preemption;

import static io.hetgpu.kubescheduler.preemption.Pods.kubeFit;
import static io.hetgpu.kubescheduler.preemption.Pods.node;
import static io.hetgpu.kubescheduler.preemption.Pods.preemptor;
import static io.hetgpu.kubescheduler.preemption.Pods.running;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.SchedulingPod;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DefaultPreemptionTest {

    // Two full 4-GPU nodes: "old" runs one 4-GPU low pod started at minute 0, "new" two 2-GPU low pods started later.
    private final List<io.hetgpu.kubescheduler.SchedulingNode> nodes = List.of(node("old", 4), node("new", 4));
    private final Map<String, List<RunningPod>> pods = Map.of(
            "old", List.of(running("a-0", 0, 4, 0)),
            "new", List.of(running("b-0", 0, 2, 5), running("c-0", 0, 2, 6)));
    private final DefaultPreemption preemption = new DefaultPreemption(CandidateSampling.DEFAULTS, new Random(1));

    @Test
    void withoutExtendersKubeSchedulersRulesPickTheNodeWithFewerVictims() {
        var urgent = preemptor(1000, 4);
        var outcome = preemption.preempt(urgent, nodes, pods, Set.of(), List.of(), kubeFit(urgent), List.of());
        // Both nodes free 4 GPUs with victims of the same priority; "old" has one victim against two (a lower sum, then fewer).
        assertThat(outcome).isEqualTo(new DefaultPreemption.Outcome.Nominate("old", new Victims(List.of(running("a-0", 0, 4, 0)), 0)));
    }

    @Test
    void anExtenderPrunesTheCandidatesBeforeThePick() {
        var urgent = preemptor(1000, 4);
        DefaultPreemption.Extender keepsNew = candidates -> {
            var kept = new LinkedHashMap<String, Victims>();
            kept.put("new", candidates.get("new"));
            return kept;
        };
        var outcome = preemption.preempt(urgent, nodes, pods, Set.of(), List.of(), kubeFit(urgent), List.of(keepsNew));
        assertThat(outcome).isInstanceOfSatisfying(DefaultPreemption.Outcome.Nominate.class,
                nominate -> assertThat(nominate.node()).isEqualTo("new"));
    }

    @Test
    void anExtenderThatKeepsNothingOrFailsLeavesNoNomination() {
        var urgent = preemptor(1000, 4);
        assertThat(preemption.preempt(urgent, nodes, pods, Set.of(), List.of(), kubeFit(urgent), List.of(candidates -> Map.of())))
                .isEqualTo(new DefaultPreemption.Outcome.None(DefaultPreemption.NO_VICTIMS));
        DefaultPreemption.Extender failing = candidates -> {
            throw new DefaultPreemption.Refusal("extender http://x: connection refused");
        };
        assertThat(preemption.preempt(urgent, nodes, pods, Set.of(), List.of(), kubeFit(urgent), List.of(failing)))
                .isEqualTo(new DefaultPreemption.Outcome.None("extender http://x: connection refused"));
    }

    @Test
    void aNodeThatWouldTakeThePodWithoutEvictingAnythingIsNoCandidate() {
        // Refused by something other than kube-scheduler's filters (an extender): its dry run fits the pod on "free"
        // without victims, which kube-scheduler does not count as a candidate.
        var urgent = preemptor(1000, 4);
        var withFree = List.of(node("free", 8), node("old", 4));
        var outcome = preemption.preempt(urgent, withFree, Map.of("old", List.of(running("a-0", 0, 4, 0))), Set.of(), List.of(), kubeFit(urgent),
                List.of());
        assertThat(outcome).isEqualTo(new DefaultPreemption.Outcome.Nominate("old", new Victims(List.of(running("a-0", 0, 4, 0)), 0)));
        assertThat(preemption.preempt(urgent, List.of(node("free", 8)), Map.of(), Set.of(), List.of(), kubeFit(urgent), List.of()))
                .isEqualTo(new DefaultPreemption.Outcome.None(DefaultPreemption.NO_VICTIMS));
    }

    @Test
    void unresolvableNodesAreNoCandidatesAndIneligiblePodsEvictNothing() {
        var urgent = preemptor(1000, 4);
        assertThat(preemption.preempt(urgent, nodes, pods, Set.of("old", "new"), List.of(), kubeFit(urgent), List.of()))
                .isEqualTo(new DefaultPreemption.Outcome.None(DefaultPreemption.NO_VICTIMS));
        var never = new Preemptor("u", SchedulingPod.requesting(Pods.gpus(4)), 1000, true, "");
        assertThat(preemption.preempt(never, nodes, pods, Set.of(), List.of(), kubeFit(never), List.of()))
                .isEqualTo(new DefaultPreemption.Outcome.None("not eligible due to preemptionPolicy=Never."));
    }
}
