package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.service.PolicyStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/** The policy's answers in kube-scheduler's terms, through the one API the service and the simulator call. */
public final class PolicyAnswers {

    private PolicyAnswers() {
    }

    public static FilterOutcome filter(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes) {
        return filter(policy, pod, nodes, TopTierHeadroom.NONE);
    }

    /** The filter answer while the cluster has this much top-tier headroom (which a reserve may keep from the pod). */
    public static FilterOutcome filter(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, TopTierHeadroom headroom) {
        var fitting = new ArrayList<String>();
        var failed = new LinkedHashMap<String, String>();
        var unresolvable = new LinkedHashMap<String, String>();
        for (var assessment : policy.assessAll(pod, nodes, PolicyStep.closedTier(policy, pod, () -> headroom))) {
            switch (assessment) {
                case PlacementPolicy.Fit fit -> fitting.add(fit.candidate().name());
                case PlacementPolicy.Misfit misfit -> (misfit.rejection().unresolvable() ? unresolvable : failed)
                        .put(misfit.node(), misfit.rejection().reason());
            }
        }
        return new FilterOutcome(fitting, failed, unresolvable);
    }

    public static ScoreTable prioritize(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, PlacementContext context) {
        return prioritize(policy, pod, nodes, context, TopTierHeadroom.NONE);
    }

    public static ScoreTable prioritize(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, PlacementContext context,
                                        TopTierHeadroom headroom) {
        return PolicyStep.scores(policy, pod, nodes, () -> headroom, context);
    }

    /** One node judged with no tier closed. */
    public static PlacementPolicy.Assessment assess(PlacementPolicy policy, PodRequest pod, NodeState node) {
        return policy.assess(pod, node, HighPriorityReserve.ClosedTier.NONE);
    }
}
