package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;

/** {@code hetgpu.io/min-compute-capability}: cards at least this new. */
public final class ComputeCapabilityFilter implements DeviceFilter {

    @Override
    public boolean appliesTo(PodRequest pod) {
        return !pod.minComputeCapability().equals(PodRequest.ANY_COMPUTE_CAPABILITY);
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return kind.computeCapability().isAtLeast(pod.minComputeCapability());
    }

    @Override
    public String requirement(PodRequest pod) {
        return "compute capability " + pod.minComputeCapability() + " or newer";
    }
}
