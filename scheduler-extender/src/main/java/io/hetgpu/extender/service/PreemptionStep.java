package io.hetgpu.extender.service;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.policy.JobCloseness;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.Candidate;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pure step of the preempt verb, as the service takes it and as the simulator replays it: each node kube-scheduler
 * proposes is judged as it would be once its victims are gone (does it leave a GPU set the pod can use, of which
 * tier), then {@link PreemptionChoice} keeps the newest cards for a pod that wants them, the nodes closest to its job
 * (counting, for each of its pods still waiting, whether evicting lower-priority pods there could make room for it too)
 * and the least work lost.
 */
public final class PreemptionStep {

    /**
     * One node kube-scheduler proposes.
     *
     * @param after          the node as it would be with the victims' GPUs free; null when the extender does not know the
     *                       node, which it then leaves to kube-scheduler
     * @param reachable      the node as it would be with every pod below the preemptor's priority gone that preemption may
     *                       evict without breaking a disruption budget: the room further evictions could make there for
     *                       the job's pods still waiting (null: {@code after})
     * @param gpuSecondsLost the work the victims lose, each since it last saved it
     * @param pdbViolations  the PodDisruptionBudgets the evictions break, as kube-scheduler counted them
     */
    public record Proposal(String node, NodeState after, NodeState reachable, long gpuSecondsLost, long pdbViolations) {

        public Proposal {
            reachable = reachable == null ? after : reachable;
        }

        public Proposal(String node, NodeState after, long gpuSecondsLost, long pdbViolations) {
            this(node, after, after, gpuSecondsLost, pdbViolations);
        }

        public Proposal(String node, NodeState after, long gpuSecondsLost) {
            this(node, after, gpuSecondsLost, 0);
        }
    }

    /**
     * @param kept    the nodes kept, in the proposals' order
     * @param freed   for each kept node hetgpu could judge, what the pod would get, e.g. "4 A100 (NVLink)"
     * @param refused for each other node, why
     */
    public record Verdict(List<String> kept, Map<String, String> freed, Map<String, String> refused) {

        public Verdict {
            kept = List.copyOf(kept);
            freed = Map.copyOf(freed);
            refused = Map.copyOf(refused);
        }
    }

    private PreemptionStep() {
    }

    public static Verdict judge(PlacementPolicy policy, PodRequest pod, ClosedTier closed, PlacementContext context,
                                List<Proposal> proposals) {
        var options = new ArrayList<PreemptionChoice.Option>();
        var freed = new LinkedHashMap<String, String>();
        var refused = new LinkedHashMap<String, String>();
        var closeness = JobCloseness.of(context);
        for (var proposal : proposals) {
            if (!pod.needsGpus() || proposal.after() == null) {
                options.add(new PreemptionChoice.Option(proposal.node(), -1, 0, proposal.gpuSecondsLost(), proposal.pdbViolations()));
                continue;
            }
            switch (policy.assess(pod, proposal.after(), closed)) {
                case PlacementPolicy.Misfit misfit -> refused.put(proposal.node(), "evicting its victims would leave " + misfit.rejection().reason());
                case PlacementPolicy.Fit fit -> {
                    var candidate = fit.candidate();
                    options.add(new PreemptionChoice.Option(proposal.node(), candidate.tierRank(),
                            closeness.of(proposal.after(), candidate.spareGpus(proposal.reachable())),
                            proposal.gpuSecondsLost(), proposal.pdbViolations(), keptGpus(proposal.reachable())));
                    freed.put(proposal.node(), describe(fit.candidate()));
                }
            }
        }
        var chosen = PreemptionChoice.keep(options, pod.needsGpus() && policy.preferenceOf(pod) == GpuPreference.NEWEST);
        long fewest = PreemptionChoice.fewestViolations(options);
        var withinBudgets = options.stream().filter(option -> option.pdbViolations() == fewest).toList();
        int bestTier = PreemptionChoice.bestTier(withinBudgets);
        var ofBestTier = withinBudgets.stream().filter(option -> option.tierRank() == bestTier).toList();
        double closest = PreemptionChoice.closest(ofBestTier);
        var closestOptions = ofBestTier.stream().filter(option -> option.closeness() == closest).toList();
        var affordable = PreemptionChoice.withinSlack(closestOptions);
        var gathered = PreemptionChoice.gathering(closestOptions);
        var kept = new ArrayList<String>();
        for (var option : options) {
            if (chosen.contains(option.node())) {
                kept.add(option.node());
            } else {
                freed.remove(option.node());
                refused.put(option.node(), option.pdbViolations() > fewest ? "breaks more PodDisruptionBudgets than another candidate"
                        : option.tierRank() < bestTier ? "older cards than another candidate's"
                        : option.closeness() < closest ? "farther from the job's other pods than another candidate"
                        : affordable.contains(option) && !gathered.contains(option)
                                ? "fewer GPUs held by pods it cannot evict than another candidate (urgent pods are gathered, keeping other nodes whole)"
                        : "more work lost than another candidate's");
            }
        }
        return new Verdict(kept, freed, refused);
    }

    /** GPUs held by pods the preemptor cannot evict: the healthy ones not free even with every lower-priority pod gone. */
    private static int keptGpus(NodeState reachable) {
        return Long.bitCount(reachable.gpus().healthyMask()) - reachable.freeCount();
    }

    private static String describe(Candidate candidate) {
        var set = candidate.set();
        return set.positions().size() + " " + candidate.model() + (set.positions().size() > 1 && set.nvlinkConnected() ? " (NVLink)" : "");
    }
}
