package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import org.junit.jupiter.api.Test;

class GpuSourcesTest {

    @Test
    void opensASimulatedProfileByName() throws Exception {
        try (var source = GpuSources.open("simulated:dgx1-v100", "node-a", NvmlOptions.defaults())) {
            assertThat(source.description()).isEqualTo("simulated:dgx1-v100");
            assertThat(source.topology().size()).isEqualTo(8);
        }
    }

    @Test
    void refusesAnythingElseNamingTheValue() {
        assertThatThrownBy(() -> GpuSources.open("simulated:", "node-a", NvmlOptions.defaults()))
                .isInstanceOf(GpuDiscoveryException.class).hasMessageContaining("got \"simulated:\"").hasMessageContaining("dgx1-v100");
        assertThatThrownBy(() -> GpuSources.open("fake", "node-a", NvmlOptions.defaults()))
                .hasMessageStartingWith("--gpu-source must be \"nvml\" or \"simulated:<profile>\"");
    }

    @Test
    void namesAnUnknownProfile() {
        assertThatThrownBy(() -> GpuSources.open("simulated:dgx-9000", "node-a", NvmlOptions.defaults()))
                .isInstanceOf(GpuDiscoveryException.class).hasMessageContaining("dgx-9000");
    }
}
