package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.SchedulingNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;

/**
 * kube-scheduler's {@code SelectVictimsOnNode} (DefaultPreemption): remove every pod of lower priority than the
 * preemptor; if it still does not fit, the node is no candidate. Otherwise give pods back in order, most important
 * first, those whose eviction would break a PodDisruptionBudget before the others, and keep each one the preemptor
 * fits beside: the victims are the pods that could not be given back.
 */
public final class VictimSelection {

    /** Whether the preemptor passes the filters on the node with only these pods on it. */
    @FunctionalInterface
    public interface Fit {
        boolean fits(SchedulingNode node, List<RunningPod> podsLeft);
    }

    private VictimSelection() {
    }

    public static Optional<Victims> onNode(Preemptor preemptor, SchedulingNode node, List<RunningPod> podsOnNode,
                                           List<DisruptionBudget> budgets, Fit fit) {
        var left = new ArrayList<RunningPod>();
        var potential = new ArrayList<RunningPod>();
        for (var pod : podsOnNode) {
            (pod.priority() < preemptor.priority() ? potential : left).add(pod);
        }
        if (!fit.fits(node, left)) {
            return Optional.empty();
        }
        potential.sort(RunningPod::moreImportantFirst);
        var split = splitByBudget(potential, budgets);
        var victims = new ArrayList<RunningPod>();
        int violations = 0;
        for (var group : List.of(split.violating(), split.respecting())) {
            for (var pod : group) {
                left.add(pod);
                if (!fit.fits(node, left)) {
                    left.removeLast();
                    victims.add(pod);
                    violations += group == split.violating() ? 1 : 0;
                }
            }
        }
        victims.sort(RunningPod::moreImportantFirst);
        return Optional.of(new Victims(victims, violations));
    }

    private record Split(List<RunningPod> violating, List<RunningPod> respecting) {
    }

    /**
     * kube-scheduler's {@code filterPodsWithPDBViolation}: in order, each pod spends one disruption of every budget
     * covering it (unless the budget already counts it as disrupted); a pod that takes a budget below zero violates it.
     */
    private static Split splitByBudget(List<RunningPod> pods, List<DisruptionBudget> budgets) {
        var allowed = new HashMap<DisruptionBudget, Integer>();
        budgets.forEach(budget -> allowed.put(budget, budget.disruptionsAllowed()));
        var violating = new ArrayList<RunningPod>();
        var respecting = new ArrayList<RunningPod>();
        for (var pod : pods) {
            boolean violates = false;
            for (var budget : budgets) {
                if (budget.covers(pod) && !budget.disruptedPods().contains(pod.uid())) {
                    int remaining = allowed.merge(budget, -1, Integer::sum);
                    violates |= remaining < 0;
                }
            }
            (violates ? violating : respecting).add(pod);
        }
        return new Split(violating, respecting);
    }
}
