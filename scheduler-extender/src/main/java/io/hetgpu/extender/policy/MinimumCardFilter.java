package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.gpu.tier.CardRequirements;

/**
 * {@code hetgpu.io/gpu-min-model}: the named card or any the tier table ranks at or above it ("A100 or newer"), a card
 * the table does not list by the rank it estimates for it, as the node's tier label says.
 */
public final class MinimumCardFilter implements DeviceFilter {

    @Override
    public boolean appliesTo(PodRequest pod) {
        return !pod.cards().minTier().equals(CardRequirements.ANY_TIER);
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return kind.tier().rank() >= pod.cards().minTier().rank();
    }

    @Override
    public String requirement(PodRequest pod) {
        var floor = pod.cards().minTier();
        return floor.model() + " or newer (tier " + floor.rank() + " and up)";
    }
}
