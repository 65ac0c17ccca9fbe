package io.hetgpu.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LinkMatrixTest {

    @Test
    void printsLikeNvidiaSmiAndParsesBack() {
        var matrix = Fixtures.matrix(Fixtures.DGX1_V100_TOPO);

        assertThat(Fixtures.matrix(matrix.toString())).isEqualTo(matrix);
        assertThat(matrix.link(0, 3)).isEqualTo(new GpuLink.Nvlink(2, false));
        assertThat(matrix.score(0, 5)).isEqualTo(10);
    }

    @Test
    void linkTokensRoundTrip() {
        for (var token : new String[] {"NV1", "NV18", "NVS12", "BRD", "PIX", "PXB", "PHB", "NODE", "SYS"}) {
            assertThat(GpuLink.parse(token).token()).isEqualTo(token);
        }
        assertThat(GpuLink.parse("NVS18").score()).isEqualTo(1800);
        assertThatThrownBy(() -> GpuLink.parse("NV0")).hasMessageContaining("at least one link");
    }

    @Test
    void builderSetsBothDirections() {
        var matrix = LinkMatrix.builder(3, new GpuLink.Pcie(PcieRelation.HOST_BRIDGE))
                .set(0, 2, new GpuLink.Pcie(PcieRelation.SAME_BOARD)).build();

        assertThat(matrix.link(2, 0)).isEqualTo(new GpuLink.Pcie(PcieRelation.SAME_BOARD));
        assertThat(matrix.link(1, 0).token()).isEqualTo("PHB");
    }
}
