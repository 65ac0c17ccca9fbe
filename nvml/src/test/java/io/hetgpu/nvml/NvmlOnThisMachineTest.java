package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import org.junit.jupiter.api.Test;

/**
 * Real NVML, whatever this machine has. Without a driver the failure must be one sentence about
 * libnvidia-ml; with one, the report prints everything NVML saw (read it in target/surefire-reports).
 */
class NvmlOnThisMachineTest {

    private static final String NO_DRIVER = "no NVIDIA driver on this machine (libnvidia-ml.so.1 not loadable)";

    @Test
    void withoutADriverOpenFailsWithOneSentenceAboutLibnvidiaMl() {
        assumeFalse(driverLoadable(), "an NVIDIA driver is installed here; this test is for nodes without one");

        assertThatThrownBy(() -> NvmlGpuSource.open(NvmlOptions.defaults()))
                .isInstanceOf(GpuDiscoveryException.class)
                .hasMessage("NVML is not available on this node: libnvidia-ml.so.1 could not be loaded "
                        + "(is the NVIDIA driver installed and the device plugin run with the driver's libraries mounted?)")
                .hasNoCause()
                .message().doesNotContain("cudart").doesNotContain("\n");
    }

    @Test
    void withADriverNvmlReportsEveryDeviceAndLink() throws Exception {
        assumeTrue(driverLoadable(), NO_DRIVER);

        try (var source = NvmlGpuSource.open(NvmlOptions.defaults())) {
            var topology = source.topology();
            System.out.println(InventoryText.render(source.description(), topology, io.hetgpu.gpu.tier.CardCatalog.defaults()));

            assertThat(topology.size()).isPositive();
            assertThat(topology.devices()).allMatch(d -> d.memoryMiB() > 0 && d.uuid().startsWith("GPU-"));
            assertThat(topology.links().size()).isEqualTo(topology.size());
        }
    }

    private static boolean driverLoadable() {
        try {
            NvmlGpuSource.open(NvmlOptions.defaults()).close();
            return true;
        } catch (GpuDiscoveryException e) {
            return !e.getMessage().contains("libnvidia-ml.so.1 could not be loaded");
        }
    }
}
