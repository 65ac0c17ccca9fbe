package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.SchedulingNode;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * kube-scheduler's DefaultPreemption PostFilter for a pod no node took, as one step over plain records: eligibility,
 * the dry run over the nodes an eviction might fix (kube-scheduler's own filters only, as its dry run runs them), each
 * extender's preempt verb pruning the candidates in turn, then {@link NodePick}. The test cluster's scheduler and the
 * simulator both run it, so the two preempt alike; applying the outcome (evicting, nominating) is theirs.
 */
public final class DefaultPreemption {

    /** The node chosen and its victims, or why there is none (kube-scheduler's words). */
    public sealed interface Outcome {
        record Nominate(String node, Victims victims) implements Outcome {
        }

        record None(String why) implements Outcome {
        }
    }

    /** An extender's preempt verb (ProcessPreemption): which candidates it keeps, each with the victims it wants. */
    @FunctionalInterface
    public interface Extender {
        Map<String, Victims> process(Map<String, Victims> candidates) throws Refusal;
    }

    /** A non-ignorable extender failed: the preemption fails with this reason. */
    public static final class Refusal extends Exception {
        public Refusal(String reason) {
            super(reason);
        }
    }

    static final String NO_VICTIMS = "No preemption victims found for incoming pod.";

    private final CandidateSampling sampling;
    private final RandomGenerator offsets;

    /** @param offsets draws where each dry run starts its walk over the nodes, as kube-scheduler draws it at random */
    public DefaultPreemption(CandidateSampling sampling, RandomGenerator offsets) {
        this.sampling = sampling;
        this.offsets = offsets;
    }

    /**
     * @param nodes        every node
     * @param unresolvable the nodes whose refusal no eviction fixes (UnschedulableAndUnresolvable)
     * @param fit          whether the preemptor passes kube-scheduler's filters on a node holding only these pods
     * @param extenders    the interested extenders that have a preempt verb, in configuration order
     */
    public Outcome preempt(Preemptor preemptor, List<SchedulingNode> nodes, Map<String, List<RunningPod>> podsByNode,
                           Set<String> unresolvable, List<DisruptionBudget> budgets, VictimSelection.Fit fit, List<Extender> extenders) {
        var ineligible = Eligibility.check(preemptor, podsByNode, unresolvable.contains(preemptor.nominatedNodeName()));
        if (ineligible.isPresent()) {
            return new Outcome.None(ineligible.get());
        }
        var potential = nodes.stream().filter(node -> !unresolvable.contains(node.name())).toList();
        if (potential.isEmpty()) {
            return new Outcome.None(NO_VICTIMS);
        }
        var candidates = Candidates.find(preemptor, potential, podsByNode, budgets, fit, sampling, offsets.nextInt(potential.size()));
        for (var extender : extenders) {
            if (candidates.isEmpty()) {
                break;
            }
            try {
                candidates = extender.process(candidates);
            } catch (Refusal refusal) {
                return new Outcome.None(refusal.getMessage());
            }
        }
        var node = NodePick.pickOne(candidates);
        return node.isEmpty() ? new Outcome.None(NO_VICTIMS) : new Outcome.Nominate(node, candidates.get(node));
    }
}
