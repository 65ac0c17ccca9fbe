package io.hetgpu.deviceplugin.kubelet;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BackoffTest {

    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), 0.5);

    @Test
    void doublesFromTheFirstWaitUpToTheCapWithoutJitter() {
        assertThat(IntStream.range(0, 9).mapToObj(n -> backoff.delay(n, 0).toMillis()))
                .containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 6400L, 10_000L, 10_000L);
    }

    @Test
    void staysAtTheCapForEverAfterWithoutOverflowing() {
        assertThat(backoff.delay(62, 0)).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.delay(63, 0)).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.delay(Integer.MAX_VALUE, 0)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void jitterTakesOffAtMostItsShareAndNeverAddsToTheCap() {
        assertThat(backoff.delay(0, 0.5)).isEqualTo(Duration.ofMillis(75));
        assertThat(backoff.delay(20, 0.999_999)).isBetween(Duration.ofMillis(5000), Duration.ofMillis(5001));
        assertThat(backoff.delay(20, 0.25)).isEqualTo(Duration.ofMillis(8750));
    }

    @Test
    void fullJitterNeverWaitsZero() {
        assertThat(new Backoff(Duration.ofNanos(1), Duration.ofNanos(1), 1).delay(0, 0.999)).isPositive();
    }

    @Test
    void badSettingsNameTheFieldAndValue() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), 0.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("first").hasMessageContaining("PT0S");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 0.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max").hasMessageContaining("PT1S");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("jitter").hasMessageContaining("1.5");
        assertThatThrownBy(() -> backoff.delay(-1, 0)).hasMessageContaining("attempt").hasMessageContaining("-1");
        assertThatThrownBy(() -> backoff.delay(0, 1)).hasMessageContaining("random").hasMessageContaining("1.0");
    }
}
