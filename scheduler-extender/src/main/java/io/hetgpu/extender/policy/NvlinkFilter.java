package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.DeviceSummary;
import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.gpu.allocation.DeviceMask;

/**
 * {@code hetgpu.io/interconnect: nvlink}: the free devices must contain an NVLink-connected set of the
 * pod's size, as the shared allocator (the one the device plugin runs) finds it. A node whose links are
 * unknown (served neither by hetgpu's device plugin nor by its DRA driver) is refused: the pod asked for a guarantee
 * nobody can give there.
 */
public final class NvlinkFilter implements NodeFilter {

    @Override
    public Verdict check(GpuFit fit) {
        var pod = fit.pod();
        if (!pod.requireNvlink() || pod.gpuCount() < 2) {
            return Verdict.FITS;
        }
        if (!fit.node().gpus().source().knowsNvlink()) {
            return Verdict.unresolvable(NodeGpuSource.NVLINK_UNKNOWN);
        }
        if (fit.offer() != null && fit.offer().nvlinkConnected()) {
            return Verdict.FITS;
        }
        var allocator = fit.node().gpus().allocator();
        var topology = fit.node().gpus().topology();
        if (allocator.choose(fit.eligibleMask(), 0, pod.gpuCount(), true).isEmpty()) {
            return Verdict.unresolvable("node has no NVLink-connected set of " + pod.gpuCount() + " among "
                    + DeviceSummary.of(DeviceMask.positions(fit.eligibleMask()).stream().map(topology::device).toList()));
        }
        var free = DeviceMask.positions(fit.freeMask()).stream().map(topology::device).toList();
        return Verdict.retryable(DeviceSummary.free(free) + ", pod needs " + pod.gpuCount() + " with NVLink");
    }
}
