package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.NodeState;
import org.junit.jupiter.api.Test;

class NvlinkFilterTest {

    private final NvlinkFilter filter = new NvlinkFilter();

    @Test
    void fitsWhereTheFreeDevicesHoldAnNvlinkSet() {
        // DGX-1: 0-1-2-3 is a fully NVLinked quad.
        assertThat(check(TestNodes.gpu("v", TestTopologies::dgx1V100, 0, 1, 2, 3), 4)).isEqualTo(Verdict.FITS);
    }

    @Test
    void enoughFreeGpusWithoutAnNvlinkSetIsForPreemptionToFix() {
        // {1, 4, 6, 7}: GPU 1's NVLinks go to 0, 2, 3 and 5, all taken, so no four of these form an NVLink set.
        var node = TestNodes.gpu("v", TestTopologies::dgx1V100, 1, 4, 6, 7);
        assertThat(check(node, 4)).isEqualTo(Verdict.retryable("4 free V100, pod needs 4 with NVLink"));
    }

    @Test
    void aPcieServerNeverHasAnNvlinkSet() {
        assertThat(check(TestNodes.gpu("t", TestTopologies::t4x4), 2))
                .isEqualTo(Verdict.unresolvable("node has no NVLink-connected set of 2 among 4 T4 (15 GiB, cc 7.5)"));
    }

    @Test
    void singleGpuPodsNeedNoLinks() {
        assertThat(check(TestNodes.gpu("t", TestTopologies::t4x4), 1)).isEqualTo(Verdict.FITS);
    }

    private Verdict check(NodeState node, int gpus) {
        return filter.check(GpuFit.of(TestPods.nvlink(TestPods.gpus(gpus)), node, node.gpus().healthyMask()));
    }
}
