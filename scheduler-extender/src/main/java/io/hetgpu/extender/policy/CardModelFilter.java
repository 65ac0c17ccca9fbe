package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import java.util.TreeSet;

/** {@code hetgpu.io/gpu-models}: only the listed card models. */
public final class CardModelFilter implements DeviceFilter {

    @Override
    public boolean appliesTo(PodRequest pod) {
        return !pod.models().isEmpty();
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return pod.models().isEmpty() || pod.models().contains(kind.model());
    }

    @Override
    public String requirement(PodRequest pod) {
        return String.join(" or ", new TreeSet<>(pod.models()));
    }
}
