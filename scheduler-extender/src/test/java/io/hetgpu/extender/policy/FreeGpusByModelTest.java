package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestTopologies;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FreeGpusByModelTest {

    @Test
    void countsTheFreeGpusOfEachModelAcrossNodesAndLeavesOutGpusOfUnknownModel() {
        var nodes = List.of(
                TestNodes.gpu("a100-1", TestTopologies::dgxA100, 0, 1, 2),
                TestNodes.gpu("a100-2", TestTopologies::dgxA100, 7),
                TestNodes.gpu("t4", TestTopologies::t4x4),
                TestNodes.cpu("cpu"),
                TestNodes.allocatableOnly("unknown", 8));

        var free = FreeGpusByModel.of(nodes);

        assertThat(free).containsEntry("A100", 4).containsOnlyKeys("A100", "T4");
        assertThat(free.get("T4")).as("a node built without free positions: all of its GPUs free").isEqualTo(nodes.get(2).freeCount());
    }

    @Test
    void aClusterWithoutGpusHasNoTiers() {
        assertThat(FreeGpusByModel.of(List.of(TestNodes.cpu("cpu")))).isEqualTo(Map.of());
    }
}
