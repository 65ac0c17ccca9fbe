package io.hetgpu.extender.policy;

import io.hetgpu.extender.explain.LearnedSpeedWords;
import io.hetgpu.extender.explain.PodSpeeds;
import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import io.hetgpu.extender.model.PodRequest;
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
        return requirement(pod, source.current().table());
    }

    /** One table for the whole node: a new one learned meanwhile would mix two in one reason. */
    @Override
    public Verdict check(GpuFit fit) {
        return check(fit, source.current());
    }

    /**
     * The rule over one snapshot of the table. A node none of whose cards runs the class at the share is refused, said
     * in the words an explanation uses for its card closest to the share ({@link LearnedSpeedWords#tooSlow}), so that
     * kube-scheduler's reason, the Event and {@code explain} agree: "node has 4x K80: resnet50 runs at 0.12 of its V100
     * speed on K80 (learned, 9 runs; minimumSpeedShare 0.3)".
     */
    static Verdict check(GpuFit fit, ThroughputSource.Snapshot snapshot) {
        var pod = fit.pod();
        var table = snapshot.table();
        if (!applies(pod, table)) {
            return Verdict.FITS;
        }
        var gpus = fit.node().gpus();
        if (!gpus.source().knowsModel()) {
            return Verdict.unresolvable("GPU model unknown: node has " + gpus.summary() + ", pod needs " + requirement(pod, table));
        }
        var speeds = PodSpeeds.of(pod.workload(), snapshot);
        PodSpeeds.Figure closest = null;
        for (var kind : gpus.kinds()) {
            if (!table.tooSlow(pod.workload(), kind.model())) {
                return Verdict.FITS;
            }
            var figure = speeds.on(kind.model());
            if (figure.isPresent() && (closest == null || figure.get().perGpu() > closest.perGpu())) {
                closest = figure.get();
            }
        }
        var fastest = speeds.fastestKnown();
        if (closest == null || fastest.isEmpty()) {
            return Verdict.unresolvable("node has " + gpus.summary() + ", pod needs " + requirement(pod, table));
        }
        return Verdict.unresolvable("node has " + gpus.summary() + ": "
                + LearnedSpeedWords.tooSlow(speeds.workload(), closest, fastest.get(), table.minimumShare()));
    }

    private static String requirement(PodRequest pod, WorkloadThroughputs throughputs) {
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
