package io.hetgpu.nvml.javacpp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class NvmlSymbolTest {

    @Test
    void aCurrentDriverHasEverything() {
        var probe = NvmlSymbol.Probe.of(symbol -> true);

        assertThat(probe.missingRequired()).isEmpty();
        assertThat(probe.has(NvmlSymbol.NUMA_NODE)).isTrue();
    }

    @Test
    void aDriverOfThe470BranchLosesOnlyOptionalFeatures() {
        var newerThan470 = Set.of("nvmlDeviceGetNumaNodeId", "nvmlDeviceGetNvLinkRemoteDeviceType");

        var probe = NvmlSymbol.Probe.of(symbol -> !newerThan470.contains(symbol));

        assertThat(probe.missingRequired()).isEmpty();
        assertThat(probe.has(NvmlSymbol.NUMA_NODE)).isFalse();
        assertThat(probe.has(NvmlSymbol.NVLINK_REMOTE_DEVICE_TYPE)).isFalse();
        assertThat(probe.has(NvmlSymbol.NVLINK_STATE)).isTrue();
    }

    @Test
    void missingRequiredFunctionsAreNamed() {
        var probe = NvmlSymbol.Probe.of(symbol -> !symbol.equals("nvmlDeviceGetPciInfo_v3") && !symbol.equals("nvmlInit_v2"));

        assertThat(probe.missingRequired()).containsExactly("nvmlDeviceGetPciInfo_v3", "nvmlInit_v2");
    }

    @Test
    void everyOptionalSymbolSaysWhatHappensInstead() {
        for (var symbol : NvmlSymbol.values()) {
            assertThat(symbol.symbol()).startsWith("nvml");
            if (!symbol.required()) {
                assertThat(symbol.fallback()).as(symbol.symbol()).isNotBlank();
            }
        }
    }
}
