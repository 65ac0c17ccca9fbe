package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import org.junit.jupiter.api.Test;

/** The three device filters: each refuses, for good, a node none of whose cards qualify. */
class DeviceFiltersTest {

    private final NodeState v100 = TestNodes.gpu("v100-1", TestTopologies::dgx1V100);
    private final NodeState a100 = TestNodes.gpu("a100-1", TestTopologies::dgxA100);

    @Test
    void cardModelFilterRefusesOtherModelsNamingWhatTheNodeHas() {
        var pod = TestPods.models(TestPods.gpus(1), "A100", "H100");
        assertThat(check(new CardModelFilter(), pod, a100)).isEqualTo(Verdict.FITS);
        assertThat(check(new CardModelFilter(), pod, v100))
                .isEqualTo(Verdict.unresolvable("node has 8 V100 (16 GiB, cc 7.0), pod needs A100 or H100"));
    }

    @Test
    void memoryFilterComparesPerGpuMemory() {
        var pod = TestPods.memory(TestPods.gpus(1), 32 * 1024);
        assertThat(check(new GpuMemoryFilter(), pod, a100)).isEqualTo(Verdict.FITS);
        assertThat(check(new GpuMemoryFilter(), pod, v100))
                .isEqualTo(Verdict.unresolvable("node has 8 V100 (16 GiB, cc 7.0), pod needs at least 32 GiB per GPU"));
    }

    @Test
    void computeCapabilityFilterComparesMajorThenMinor() {
        var pod = TestPods.computeCapability(TestPods.gpus(1), "7.5");
        assertThat(check(new ComputeCapabilityFilter(), pod, a100)).isEqualTo(Verdict.FITS);
        assertThat(check(new ComputeCapabilityFilter(), pod, v100))
                .isEqualTo(Verdict.unresolvable("node has 8 V100 (16 GiB, cc 7.0), pod needs compute capability 7.5 or newer"));
    }

    @Test
    void filtersWithNothingToCheckLetEveryNodeThrough() {
        var pod = TestPods.gpus(1);
        for (var filter : new DeviceFilter[] {new CardModelFilter(), new GpuMemoryFilter(), new ComputeCapabilityFilter()}) {
            assertThat(check(filter, pod, v100)).isEqualTo(Verdict.FITS);
        }
    }

    private static Verdict check(DeviceFilter filter, PodRequest pod, NodeState node) {
        return filter.check(GpuFit.of(pod, node, node.gpus().healthyMask()));
    }
}
