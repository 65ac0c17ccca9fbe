package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.DeviceSummary;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;

/** {@code hetgpu.io/min-gpu-memory}: at least this much memory on every GPU. */
public final class GpuMemoryFilter implements DeviceFilter {

    @Override
    public boolean appliesTo(PodRequest pod) {
        return pod.minMemoryMiB() > 0;
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return kind.memoryMiB() >= pod.minMemoryMiB();
    }

    @Override
    public String requirement(PodRequest pod) {
        return "at least " + DeviceSummary.gib(pod.minMemoryMiB()) + " per GPU";
    }
}
