package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import io.hetgpu.extender.model.PodRequest;
import java.util.TreeSet;

/** {@code hetgpu.io/gpu-exclude-models}: never these card models, whatever else the pod accepts. */
public final class ExcludedCardFilter implements DeviceFilter {

    @Override
    public boolean appliesTo(PodRequest pod) {
        return !pod.cards().excludedModels().isEmpty();
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return !pod.cards().excludedModels().contains(kind.model());
    }

    @Override
    public String requirement(PodRequest pod) {
        return "no " + String.join(" or ", new TreeSet<>(pod.cards().excludedModels()));
    }
}
