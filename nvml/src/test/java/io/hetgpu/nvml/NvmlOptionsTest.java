package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NvmlOptionsTest {

    @Test
    void defaultsIgnoreTheApplicationXids() {
        var defaults = NvmlOptions.defaults();

        assertThat(defaults.ignoredXids()).containsExactlyInAnyOrder(13, 31, 43, 45, 68, 109);
        assertThat(defaults.recoveryPeriod()).isEqualTo(Duration.ofSeconds(60));
        assertThat(defaults.probeInterval()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void badValuesAreRejectedNamingTheField() {
        var defaults = NvmlOptions.defaults();

        assertThatThrownBy(() -> defaults.withRecoveryPeriod(Duration.ZERO))
                .hasMessage("recoveryPeriod must be a positive duration, got PT0S");
        assertThatThrownBy(() -> defaults.withProbeInterval(Duration.ofSeconds(-1)))
                .hasMessage("probeInterval must be a positive duration, got PT-1S");
        assertThatThrownBy(() -> defaults.withProbeInterval(null)).hasMessageStartingWith("probeInterval");
        assertThatThrownBy(() -> defaults.withIgnoredXids(Set.of(0)))
                .hasMessage("ignoredXids must hold positive XID codes, got 0");
        assertThatThrownBy(() -> defaults.withIgnoredXids(null)).hasMessageStartingWith("ignoredXids");
        assertThatThrownBy(() -> defaults.withProbeInterval(Duration.ofMinutes(2)))
                .hasMessageStartingWith("probeInterval (PT2M) must not be longer than recoveryPeriod (PT1M)");
    }
}
