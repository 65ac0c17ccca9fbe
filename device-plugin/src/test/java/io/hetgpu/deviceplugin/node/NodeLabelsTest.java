package io.hetgpu.deviceplugin.node;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.tier.CardCatalog;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class NodeLabelsTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    @Test
    void describesAUniformNvlinkNode() {
        assertThat(NodeLabels.of(Fixtures.dgx1V100(), catalog)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "hetgpu.io/gpu.present", "true",
                "hetgpu.io/gpu.model", "V100",
                "hetgpu.io/gpu.family", "volta",
                "hetgpu.io/gpu.tier", "40",
                "hetgpu.io/gpu.memory", "16160",
                "hetgpu.io/gpu.count", "8",
                "hetgpu.io/gpu.compute", "7.0",
                "hetgpu.io/gpu.nvlink", "true"));
    }

    @Test
    void onAMixedNodeEveryLabelIsAFloorThatHoldsForEachGpu() {
        // An L4 (tier 46, 24 GiB, 8.9) next to a V100 (tier 40, 32 GiB, 7.0): the V100 is the weaker card,
        // but the L4 has less memory, so memory comes from the L4.
        var l4 = Fixtures.device(0, "NVIDIA L4", new ComputeCapability(8, 9), 23034);
        var v100 = Fixtures.device(1, "Tesla V100-PCIE-32GB", new ComputeCapability(7, 0), 32768);
        var pcie = LinkMatrix.builder(2, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS)).build();
        var labels = NodeLabels.of(new NodeTopology("535.104.05", "12.2", List.of(l4, v100), pcie), catalog);

        assertThat(labels).containsEntry("hetgpu.io/gpu.model", "V100")
                .containsEntry("hetgpu.io/gpu.family", "volta")
                .containsEntry("hetgpu.io/gpu.tier", "40")
                .containsEntry("hetgpu.io/gpu.memory", "23034")
                .containsEntry("hetgpu.io/gpu.compute", "7.0")
                .containsEntry("hetgpu.io/gpu.count", "2")
                .containsEntry("hetgpu.io/gpu.nvlink", "false");
    }

    @Test
    void aNodeWithoutGpusSaysSoAndNothingElse() {
        var none = new NodeTopology("535.104.05", "12.2", List.of(), LinkMatrix.builder(0, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS)).build());
        assertThat(NodeLabels.of(none, catalog)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "hetgpu.io/gpu.present", "false", "hetgpu.io/gpu.count", "0"));
    }

    @Test
    void labelValuesAreValidKubernetesLabelValues() {
        assertThat(NodeLabels.labelValue("(Tesla) V100/SXM2 ")).isEqualTo("Tesla-V100-SXM2");
        assertThat(NodeLabels.labelValue("x".repeat(70))).hasSize(63);
    }
}
