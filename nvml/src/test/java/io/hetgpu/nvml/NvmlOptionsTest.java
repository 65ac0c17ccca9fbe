package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class NvmlOptionsTest {

    @Test
    void defaultsFollowNvidiasCatalogueWithoutOverrides() {
        var defaults = NvmlOptions.defaults();

        assertThat(defaults.xidRules()).isEqualTo(XidRules.defaults());
        assertThat(defaults.xidRules().skipped()).isEqualTo(XidSelection.NONE);
        assertThat(defaults.xidRules().critical()).isEqualTo(XidSelection.NONE);
        assertThat(defaults.recoveryPeriod()).isEqualTo(Duration.ofSeconds(60));
        assertThat(defaults.probeInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(defaults.stickyMarkFile()).isEmpty();
    }

    @Test
    void badValuesAreRejectedNamingTheField() {
        var defaults = NvmlOptions.defaults();

        assertThatThrownBy(() -> defaults.withRecoveryPeriod(Duration.ZERO))
                .hasMessage("recoveryPeriod must be a positive duration, got PT0S");
        assertThatThrownBy(() -> defaults.withProbeInterval(Duration.ofSeconds(-1)))
                .hasMessage("probeInterval must be a positive duration, got PT-1S");
        assertThatThrownBy(() -> defaults.withProbeInterval(null)).hasMessageStartingWith("probeInterval");
        assertThatThrownBy(() -> defaults.withXidRules(null)).hasMessageStartingWith("xidRules");
        assertThatThrownBy(() -> defaults.withProbeInterval(Duration.ofMinutes(2)))
                .hasMessageStartingWith("probeInterval (PT2M) must not be longer than recoveryPeriod (PT1M)");
    }
}
