package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.gpu.GpuDevice;

/**
 * A filter on single devices (card model, memory, compute capability). A node none of whose GPUs
 * passes is refused for good: preemption cannot change what cards a node has.
 */
public interface DeviceFilter extends NodeFilter {

    /** Whether the pod says anything this filter checks. */
    boolean appliesTo(PodRequest pod);

    boolean admits(PodRequest pod, GpuDevice device);

    /** What the pod asks for, for reasons: "A100 or H100", "at least 32 GiB per GPU". */
    String requirement(PodRequest pod);

    @Override
    default Verdict check(GpuFit fit) {
        if (!appliesTo(fit.pod())) {
            return Verdict.FITS;
        }
        var devices = fit.node().gpus().topology().devices();
        for (var device : devices) {
            if (admits(fit.pod(), device)) {
                return Verdict.FITS;
            }
        }
        return Verdict.unresolvable("node has " + DeviceSummary.of(devices) + ", pod needs " + requirement(fit.pod()));
    }
}
