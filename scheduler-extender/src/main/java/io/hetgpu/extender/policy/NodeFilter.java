package io.hetgpu.extender.policy;

/** One reason a node may not take a GPU pod. Pure: the same fit always gives the same verdict. */
public interface NodeFilter {

    Verdict check(GpuFit fit);
}
