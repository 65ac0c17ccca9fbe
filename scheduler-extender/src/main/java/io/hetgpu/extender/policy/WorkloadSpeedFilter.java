package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import java.util.Locale;

/**
 * {@code hetgpu.io/workload} with the admin's {@code minimumSpeedShare}: cards on which the pod's class
 * runs below that share of its speed on the class's fastest listed card are not offered, so the pod
 * waits for a card it runs well on rather than holding a slow one for many times as long.
 */
public final class WorkloadSpeedFilter implements DeviceFilter {

    private final WorkloadThroughputs throughputs;

    public WorkloadSpeedFilter(WorkloadThroughputs throughputs) {
        this.throughputs = throughputs;
    }

    @Override
    public boolean appliesTo(PodRequest pod) {
        return throughputs.minimumShare() > 0 && pod.needsGpus() && throughputs.knows(pod.workload());
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        return !appliesTo(pod) || !throughputs.tooSlow(pod.workload(), kind.model());
    }

    @Override
    public String requirement(PodRequest pod) {
        return String.format(Locale.ROOT, "cards running workload %s at %.0f %% or more of its %s speed", pod.workload(),
                100 * throughputs.minimumShare(), throughputs.fastestCard(pod.workload()));
    }
}
