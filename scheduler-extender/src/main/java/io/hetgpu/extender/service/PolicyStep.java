package io.hetgpu.extender.service;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.ClusterGpus;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.TopTierHeadroom;
import java.util.List;
import java.util.function.Function;
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

    /**
     * The tiers closed to the pod now: the reserve's for an ordinary pod, else for a high-priority one the tiers below
     * the cards preemption could free for it ({@code reachable}: the nodes with every lower-priority pod's GPUs free),
     * each counted only when the policy has it on.
     */
    public static ClosedTier closedTier(PlacementPolicy policy, PodRequest pod, Supplier<TopTierHeadroom> headroom,
                                        Function<Integer, List<NodeState>> reachable) {
        var reserved = closedTier(policy, pod, headroom);
        return reserved != ClosedTier.NONE ? reserved : evictionFloor(policy, pod, reachable);
    }

    /**
     * The tiers closed to the pod now, as the filter, the preempt verb and the bind verb close them: every card while a
     * pod of several GPUs waits for the job headroom's room ({@code gpus}: the cluster's, with the GPUs job plans hold
     * taken), else the reserve's or the eviction floor's, each counted only when the policy has it on and it concerns
     * the pod.
     */
    public static ClosedTier closedTier(PlacementPolicy policy, PodRequest pod, Supplier<ClusterGpus> gpus, Supplier<TopTierHeadroom> headroom,
                                        Function<Integer, List<NodeState>> reachable) {
        var room = heldForRoom(policy, pod, gpus);
        return room != ClosedTier.NONE ? room : closedTier(policy, pod, headroom, reachable);
    }

    /** Every card while a pod of several GPUs waits for the job headroom's room; the cluster is counted only for such a pod. */
    public static ClosedTier heldForRoom(PlacementPolicy policy, PodRequest pod, Supplier<ClusterGpus> gpus) {
        return policy.keepsRoomFrom(pod) ? policy.heldForRoom(pod, gpus.get()) : ClosedTier.NONE;
    }

    /** The tiers an eviction floor closes to the pod; the nodes preemption could leave are built only for a pod it concerns. */
    public static ClosedTier evictionFloor(PlacementPolicy policy, PodRequest pod, Function<Integer, List<NodeState>> reachable) {
        return policy.floorsEvictions() ? policy.evictionFloor(pod, () -> reachable.apply(pod.specPriority())) : ClosedTier.NONE;
    }

    /** The prioritize answer over these nodes, before it is written: every node's row, scores 0..10 for those that fit. */
    public static ScoreTable scores(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, Supplier<TopTierHeadroom> headroom,
                                    PlacementContext context) {
        return policy.score(pod, policy.assessAll(pod, nodes, closedTier(policy, pod, headroom)), context);
    }

    /** The same where the closed tiers are already known. */
    public static ScoreTable scores(PlacementPolicy policy, PodRequest pod, List<NodeState> nodes, ClosedTier closed,
                                    PlacementContext context) {
        return policy.score(pod, policy.assessAll(pod, nodes, closed), context);
    }
}
