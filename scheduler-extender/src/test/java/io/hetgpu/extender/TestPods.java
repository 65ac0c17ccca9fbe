package io.hetgpu.extender;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.gpu.ComputeCapability;
import java.util.List;
import java.util.Set;

/** PodRequests for policy tests: start from {@link #gpus} and change one thing. */
public final class TestPods {

    private TestPods() {
    }

    public static PodRequest gpus(int count) {
        return PodRequest.gpus("p", count);
    }

    /** The pod as the API server has it: with a UID. */
    public static PodRequest uid(PodRequest pod, String uid) {
        return new PodRequest(pod.namespace(), pod.name(), uid, pod.gpuCount(), pod.models(), pod.minMemoryMiB(),
                pod.minComputeCapability(), pod.requireNvlink(), pod.specPriority(), pod.priorityHint(), pod.preference(),
                pod.job(), pod.role(), pod.claimNames(), pod.workload());
    }

    public static PodRequest models(PodRequest pod, String... models) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), Set.of(models), pod.minMemoryMiB(),
                pod.minComputeCapability(), pod.requireNvlink(), pod.specPriority(), pod.priorityHint(), pod.preference(),
                pod.job(), pod.role(), pod.claimNames());
    }

    public static PodRequest memory(PodRequest pod, long mib) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), pod.models(), mib,
                pod.minComputeCapability(), pod.requireNvlink(), pod.specPriority(), pod.priorityHint(), pod.preference(),
                pod.job(), pod.role(), pod.claimNames());
    }

    public static PodRequest computeCapability(PodRequest pod, String cc) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), pod.models(), pod.minMemoryMiB(),
                ComputeCapability.parse(cc), pod.requireNvlink(), pod.specPriority(), pod.priorityHint(), pod.preference(),
                pod.job(), pod.role(), pod.claimNames());
    }

    public static PodRequest nvlink(PodRequest pod) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), pod.models(), pod.minMemoryMiB(),
                pod.minComputeCapability(), true, pod.specPriority(), pod.priorityHint(), pod.preference(),
                pod.job(), pod.role(), pod.claimNames());
    }

    public static PodRequest priority(PodRequest pod, int priority, PriorityHint hint, GpuPreference preference) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), pod.models(), pod.minMemoryMiB(),
                pod.minComputeCapability(), pod.requireNvlink(), priority, hint, preference, pod.job(), pod.role(), pod.claimNames());
    }

    public static PodRequest job(PodRequest pod, String job) {
        return new PodRequest(pod.namespace(), pod.name(), pod.uid(), pod.gpuCount(), pod.models(), pod.minMemoryMiB(),
                pod.minComputeCapability(), pod.requireNvlink(), pod.specPriority(), pod.priorityHint(), pod.preference(),
                job, "worker", List.of());
    }
}
