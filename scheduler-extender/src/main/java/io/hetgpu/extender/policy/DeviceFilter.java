package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeGpus.DeviceKind;
import io.hetgpu.extender.model.PodRequest;

/**
 * A filter on single devices (card model, memory, compute capability). A node none of whose GPUs
 * passes is refused for good: preemption cannot change what cards a node has. So is a node whose GPUs'
 * model no source tells, when the pod asks anything of the card.
 */
public interface DeviceFilter extends NodeFilter {

    /** Whether the pod says anything this filter checks. */
    boolean appliesTo(PodRequest pod);

    /** Whether the pod may have GPUs of this kind (model, memory, compute capability, tier). */
    boolean admits(PodRequest pod, DeviceKind kind);

    /** What the pod asks for, for reasons: "A100 or H100", "at least 32 GiB per GPU". */
    String requirement(PodRequest pod);

    @Override
    default Verdict check(GpuFit fit) {
        if (!appliesTo(fit.pod())) {
            return Verdict.FITS;
        }
        var gpus = fit.node().gpus();
        if (!gpus.source().knowsModel()) {
            return Verdict.unresolvable("GPU model unknown: node has " + gpus.summary() + ", pod needs " + requirement(fit.pod()));
        }
        for (var kind : gpus.kinds()) {
            if (admits(fit.pod(), kind)) {
                return Verdict.FITS;
            }
        }
        return Verdict.unresolvable("node has " + gpus.summary() + ", pod needs " + requirement(fit.pod()));
    }
}
