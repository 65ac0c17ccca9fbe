package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Which of one node's pods preemption could evict without breaking a PodDisruptionBudget, counted as kube-scheduler counts. */
class DisruptionBudgetsTest {

    private static final Instant T = Instant.parse("2026-11-28T10:00:00Z");
    private final Map<String, DisruptionBudgets.PodLabels> labels = new HashMap<>();

    private BoundPod pod(String uid, String namespace, int priority, int secondsAgo, Map<String, String> podLabels) {
        labels.put(uid, new DisruptionBudgets.PodLabels(namespace, "pod-" + uid, podLabels));
        return new BoundPod(uid, 1, false, T.minusSeconds(secondsAgo), List.of(), priority);
    }

    private Function<String, DisruptionBudgets.PodLabels> lookup() {
        return labels::get;
    }

    private static DisruptionBudgets.Budget budget(String namespace, Map<String, String> selector, int allowed, Set<String> disrupted) {
        return new DisruptionBudgets.Budget(namespace, new LabelSelection(selector, List.of()), allowed, disrupted);
    }

    @Test
    void withoutBudgetsEveryPodMayGoAndUntilTheyAreReadNone() {
        var pods = List.of(pod("a", "ml", 0, 10, Map.of("app", "x")), pod("b", "ml", 0, 5, Map.of()));

        assertThat(DisruptionBudgets.NONE.evictable(pods, lookup())).containsExactlyInAnyOrder("a", "b");
        assertThat(DisruptionBudgets.UNKNOWN.evictable(pods, lookup())).isEmpty();
    }

    @Test
    void belowAPriorityOnlyPodsThatHoldTheirGpusBelowItAreCandidatesAndTheyShareTheAllowance() {
        var budgets = DisruptionBudgets.of(List.of(budget("ml", Map.of("budget", "one"), 1, Set.of())));
        var low = pod("low", "ml", 0, 30, Map.of("budget", "one"));
        var lower = pod("lower", "ml", -5, 40, Map.of("budget", "one"));
        var atPriority = pod("at", "ml", 100, 50, Map.of("app", "x"));
        var leaving = pod("leaving", "ml", 0, 60, Map.of("app", "x")).releasedAt(T.minusSeconds(1));
        labels.put("binding", new DisruptionBudgets.PodLabels("ml", "pod-binding", Map.of("app", "x")));
        var binding = BoundPod.binding("binding", 1, List.of("GPU-0"), T, 0);
        var bound = List.of(lower, atPriority, leaving, binding, low);

        // The pod at the preemptor's own priority, the one leaving and the bind in flight are never victims; of the two
        // below it under a budget allowing one disruption, the more important (higher priority) takes the allowance.
        assertThat(budgets.evictableBelow(bound, 100, lookup())).containsExactly("low");
        assertThat(DisruptionBudgets.NONE.evictableBelow(bound, 100, lookup())).containsExactlyInAnyOrder("low", "lower");
        assertThat(DisruptionBudgets.NONE.evictableBelow(bound, 101, lookup())).containsExactlyInAnyOrder("low", "lower", "at");
        assertThat(DisruptionBudgets.NONE.evictableBelow(bound, 0, lookup())).containsExactly("lower");
        assertThat(DisruptionBudgets.UNKNOWN.evictableBelow(bound, 101, lookup())).isEmpty();
    }

    @Test
    void withoutBudgetsAPodTheLabelsDoNotKnowMayGoToo() {
        var unknown = new BoundPod("unknown", 1, false, T, List.of(), 0);

        assertThat(DisruptionBudgets.NONE.evictable(List.of(unknown), lookup())).containsExactly("unknown");
        assertThat(DisruptionBudgets.of(List.of(budget("ml", Map.of("app", "x"), 5, Set.of()))).evictable(List.of(unknown), lookup())).isEmpty();
    }

    @Test
    void aBudgetWithNoDisruptionLeftGuardsTheFirstPodsAndOneWithAllowanceLetsThatManyGo() {
        var guarded = pod("guarded", "ml", 0, 10, Map.of("budget", "zero"));
        var other = pod("other", "ml", 0, 10, Map.of("app", "free"));
        // Three pods under a budget that allows one disruption: the most important (higher priority, then bound earlier)
        // takes it, the other two would break it.
        var first = pod("first", "ml", 5, 1, Map.of("budget", "one"));
        var second = pod("second", "ml", 0, 30, Map.of("budget", "one"));
        var third = pod("third", "ml", 0, 20, Map.of("budget", "one"));
        var budgets = DisruptionBudgets.of(List.of(budget("ml", Map.of("budget", "zero"), 0, Set.of()),
                budget("ml", Map.of("budget", "one"), 1, Set.of())));

        assertThat(budgets.evictable(List.of(third, guarded, second, other, first), lookup())).containsExactlyInAnyOrder("other", "first");
    }

    @Test
    void eachNodeIsCountedFromTheWholeAllowanceAsKubeSchedulerJudgesEachCandidateApart() {
        var budgets = DisruptionBudgets.of(List.of(budget("ml", Map.of("budget", "one"), 1, Set.of())));
        var onA = pod("a", "ml", 0, 10, Map.of("budget", "one"));
        var onB = pod("b", "ml", 0, 10, Map.of("budget", "one"));

        assertThat(budgets.evictable(List.of(onA), lookup())).containsExactly("a");
        assertThat(budgets.evictable(List.of(onB), lookup())).containsExactly("b");
    }

    @Test
    void aPodAlreadyBeingDisruptedCostsNothingAndAPodWithoutLabelsIsNeverChecked() {
        var budgets = DisruptionBudgets.of(List.of(budget("ml", Map.of("budget", "zero"), 0, Set.of("pod-leaving")),
                new DisruptionBudgets.Budget("ml", new LabelSelection(Map.of(), List.of(new LabelSelection.Requirement("app",
                        LabelSelection.Operator.DOES_NOT_EXIST, Set.of()))), 0, Set.of())));
        var leaving = pod("leaving", "ml", 0, 10, Map.of("budget", "zero", "app", "x"));
        var bare = pod("bare", "ml", 0, 10, Map.of());

        assertThat(budgets.evictable(List.of(leaving, bare), lookup())).containsExactlyInAnyOrder("leaving", "bare");
    }

    @Test
    void aBudgetSelectsOnlyItsOwnNamespacesPodsAndAnEmptySelectorSelectsNone() {
        var budgets = DisruptionBudgets.of(List.of(budget("team-a", Map.of("app", "x"), 0, Set.of()), budget("team-b", Map.of(), 0, Set.of())));
        var teamA = pod("a", "team-a", 0, 10, Map.of("app", "x"));
        var teamB = pod("b", "team-b", 0, 10, Map.of("app", "x"));
        var unknown = new BoundPod("gone", 1, false, T, List.of(), 0);

        assertThat(budgets.evictable(List.of(teamA, teamB, unknown), lookup())).as("a pod the view no longer holds counts as guarded")
                .containsExactly("b");
    }

    @Test
    void aNamespaceWithMoreBudgetsThanTheBoundGuardsOnlyItsOwnPods() {
        var many = new ArrayList<DisruptionBudgets.Budget>();
        IntStream.range(0, DisruptionBudgets.MAX_BUDGETS_PER_NAMESPACE + 1)
                .forEach(i -> many.add(budget("crowd", Map.of("app", "nothing-" + i), 5, Set.of())));
        many.add(budget("ml", Map.of("app", "other"), 5, Set.of()));
        var budgets = DisruptionBudgets.of(many);
        var crowd = pod("c", "crowd", 0, 10, Map.of("app", "x"));
        var ml = pod("m", "ml", 0, 10, Map.of("app", "x"));

        assertThat(budgets.evictable(List.of(crowd, ml), lookup())).containsExactly("m");
    }

    @Test
    void selectorsOfMoreTermsThanTheBoundGuardTheirNamespace() {
        var terms = new HashMap<String, String>();
        IntStream.range(0, DisruptionBudgets.MAX_TERMS_PER_NAMESPACE + 1).forEach(i -> terms.put("k" + i, "v"));
        var budgets = DisruptionBudgets.of(List.of(budget("wide", terms, 5, Set.of())));

        assertThat(budgets.evictable(List.of(pod("w", "wide", 0, 10, Map.of("app", "x"))), lookup())).isEmpty();
    }
}
