package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.DeviceSummary;
import io.hetgpu.gpu.allocation.DeviceMask;

/**
 * Enough free healthy GPUs of the kinds the pod accepts. Too few in total (or too few healthy) is
 * unresolvable; enough in total but too few free is for preemption to fix.
 */
public final class GpuCountFilter implements NodeFilter {

    @Override
    public Verdict check(GpuFit fit) {
        int needed = fit.pod().gpuCount();
        var topology = fit.node().gpus().topology();
        if (topology.size() < needed) {
            return Verdict.unresolvable("node has " + (topology.size() == 0 ? "no GPUs" : topology.size() + " GPUs in total")
                    + ", pod needs " + needed);
        }
        if (fit.eligibleCount() < needed) {
            int healthy = Long.bitCount(fit.node().gpus().healthyMask());
            var what = healthy < topology.size() && healthy < needed
                    ? healthy + " healthy of " + topology.size() + " GPUs"
                    : fit.eligibleCount() + " suitable of " + topology.size() + " GPUs";
            return Verdict.unresolvable("node has " + what + ", pod needs " + needed);
        }
        if (fit.freeCount() < needed) {
            var free = DeviceMask.positions(fit.freeMask()).stream().map(topology::device).toList();
            return Verdict.retryable(DeviceSummary.free(free) + ", pod needs " + needed);
        }
        return Verdict.FITS;
    }
}
