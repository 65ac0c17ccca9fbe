package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.gpu.DeviceHealth;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuCountFilterTest {

    private final GpuCountFilter filter = new GpuCountFilter();

    @Test
    void tooFewFreeGpusIsForPreemptionToFix() {
        var node = TestNodes.gpu("v100-1", TestTopologies::dgx1V100, 0, 5);
        assertThat(check(node, 4)).isEqualTo(Verdict.retryable("2 free V100, pod needs 4"));
        assertThat(check(node, 2)).isEqualTo(Verdict.FITS);
    }

    @Test
    void tooFewGpusInTotalIsUnresolvable() {
        assertThat(check(TestNodes.gpu("t4-1", TestTopologies::t4x4), 8))
                .isEqualTo(Verdict.unresolvable("node has 4 GPUs in total, pod needs 8"));
        assertThat(check(TestNodes.cpu("cpu-1"), 1)).isEqualTo(Verdict.unresolvable("node has no GPUs, pod needs 1"));
    }

    @Test
    void unhealthyGpusCannotBeFreedByPreemption() {
        var node = TestNodes.gpu("t4-1", TestTopologies::t4x4);
        var topology = node.gpus().topology();
        var sick = topology.withHealth(Map.of(topology.device(0).uuid(), DeviceHealth.UNHEALTHY,
                topology.device(1).uuid(), DeviceHealth.UNHEALTHY));
        var state = new io.hetgpu.extender.model.NodeStateFactory(io.hetgpu.gpu.tier.CardCatalog.defaults(), "rack")
                .state(new io.hetgpu.extender.model.NodeFacts("t4-1", "", Map.of(), TestTopologies.inventory(sick), null), java.util.List.of());
        assertThat(check(state, 3)).isEqualTo(Verdict.unresolvable("node has 2 healthy of 4 GPUs, pod needs 3"));
    }

    private Verdict check(NodeState node, int gpus) {
        return filter.check(GpuFit.of(TestPods.gpus(gpus), node, node.gpus().healthyMask()));
    }
}
