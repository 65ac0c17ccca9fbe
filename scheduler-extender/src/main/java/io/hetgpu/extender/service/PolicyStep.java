package io.hetgpu.extender.service;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.TopTierHeadroom;
import java.util.List;
import java.util.function.Supplier;

/**
 * The pure step of a request, as the service takes it and as the simulator replays it: the tier a reserve closes
 * to the pod (the headroom counted only when a reserve exists), then every node judged and the fitting ones scored.
 */
public final class PolicyStep {

    private PolicyStep() {
    }

    /** The tier a high-priority reserve closes to the pod while the cluster has {@code headroom}. */
    public static ClosedTier closedTier(PlacementPolicy policy, PodRequest pod, Supplier<TopTierHeadroom> headroom) {
        return policy.reservesTopTier() ? policy.closedTier(pod, headroom.get()) : ClosedTier.NONE;
    }

    /** The prioritize answer over these nodes, before it is written: every node's row, scores 0..10 for those that fit. */
    public static ScoreTable scores(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, Supplier<TopTierHeadroom> headroom,
                                    PlacementContext context) {
        return policy.score(pod, policy.assessAll(pod, nodes, closedTier(policy, pod, headroom)), context);
    }
}
