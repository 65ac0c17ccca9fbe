package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.Locale;

/**
 * {@code hetgpu.io/workload} with the admin's {@code minimumSpeedShare}: cards on which the pod's class
 * runs below that share of its speed on the class's fastest listed card are not offered, so the pod
 * waits for a card it runs well on rather than holding a slow one for many times as long.
 */
public final class WorkloadSpeedFilter implements DeviceFilter {

    /** Read per call: the learned table changes while the filter lives. */
    private final ThroughputSource source;

    public WorkloadSpeedFilter(WorkloadThroughputs throughputs) {
        this(ThroughputSource.fixed(throughputs));
    }

    public WorkloadSpeedFilter(ThroughputSource source) {
        this.source = source;
    }

    @Override
    public boolean appliesTo(PodRequest pod) {
        return applies(pod, source.current().table());
    }

    private static boolean applies(PodRequest pod, WorkloadThroughputs throughputs) {
        return throughputs.minimumShare() > 0 && pod.needsGpus() && throughputs.knows(pod.workload());
    }

    @Override
    public boolean admits(PodRequest pod, DeviceKind kind) {
        var throughputs = source.current().table();
        return !applies(pod, throughputs) || !throughputs.tooSlow(pod.workload(), kind.model());
    }

    @Override
    public String requirement(PodRequest pod) {
        var throughputs = source.current().table();
        var fastest = throughputs.fastestKnownCard(pod.workload());
        return String.format(Locale.ROOT, "cards running workload %s at %.0f %% or more of its %s speed (%s)", pod.workload(),
                100 * throughputs.minimumShare(), fastest, figure(throughputs, pod.workload(), fastest));
    }

    /** A figure as an explanation shows it: its value per GPU-second and whether it was measured or given. */
    static String figure(WorkloadThroughputs throughputs, String workload, String model) {
        return String.format(Locale.ROOT, "%.4g per GPU-second%s", throughputs.of(workload, model),
                throughputs.isPrior(workload, model) ? ", a prior" : "");
    }
}
