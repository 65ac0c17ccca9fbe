package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.wire.ExtenderArgs;

/**
 * What the service may remember between requests, and everything it remembers: the request's nodes
 * resolved to states, the pod read, each node's assessment for a pod shape, the cluster's top-tier headroom.
 * {@link MemoizingCache} keeps derived data between calls; {@link NoCache} recomputes everything, and a test
 * holds the two to the same answers byte for byte, so the first can change without changing what
 * kube-scheduler hears.
 */
public sealed interface RequestCache permits MemoizingCache, NoCache {

    /** Per-request bookkeeping a cache carries from {@link #resolve} to {@link #assess}. */
    interface Trace {
        Trace NONE = new Trace() { };
    }

    /** The request's nodes, each name once: a name given again is the node already answered for. */
    ResolvedNodes resolve(ExtenderArgs args);

    /**
     * A prioritize's nodes, resolved as {@link #resolve} does. kube-scheduler asks prioritize about the nodes the filter
     * just kept, in the filter's order, so a cache may look for them where that filter found them.
     */
    ResolvedNodes resolveFiltered(ExtenderArgs args);

    /**
     * The filter kept these of its resolved nodes, in their order: {@code indexes[0, count)} index {@code nodes}'
     * states.
     */
    void filtered(ResolvedNodes nodes, int[] indexes, int count);

    /** The pod's request as the policy reads it. */
    PodRequest parse(Pod pod) throws InvalidPodRequestException;

    /** The policy's assessment of each resolved node, in their order. */
    PlacementPolicy.Assessment[] assess(PodRequest pod, ClosedTier closed, ResolvedNodes nodes);

    /**
     * The top tier's free GPUs across the whole cluster where the cluster view knows it, else across the
     * request's nodes (without an API server; kube-scheduler may have filtered some out, so the count can
     * be low and a reserve then holds back more than it must).
     */
    TopTierHeadroom headroom(ResolvedNodes nodes);

    /** The top tier's free GPUs across the cluster view's nodes. */
    TopTierHeadroom clusterHeadroom();

    /** The headroom as last counted (NONE before the first count). */
    TopTierHeadroom lastHeadroom();
}
