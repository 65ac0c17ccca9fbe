package io.hetgpu.gpu.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class PercentilesTest {

    @Test
    void takesTheNearestRankOfTheSamplesCounted() {
        // 1..100 shuffled, then two samples past the count that must not be read.
        var samples = LongStream.concat(LongStream.rangeClosed(1, 100).map(i -> (i * 37) % 100 + 1), LongStream.of(1_000, 2_000)).toArray();

        assertThat(Percentiles.of(samples, 100, 50)).isEqualTo(50);
        assertThat(Percentiles.of(samples, 100, 99)).isEqualTo(99);
        assertThat(Percentiles.of(samples, 100, 100)).isEqualTo(100);
        assertThat(samples[0]).as("the samples are left in their order").isEqualTo(38);
    }

    @Test
    void aP99OfFewSamplesIsTheLargest() {
        assertThat(Percentiles.of(new long[] {5, 1, 3}, 3, 99)).isEqualTo(5);
        assertThat(Percentiles.of(List.of(2.5, 0.5), 50)).isEqualTo(0.5);
        assertThat(Percentiles.of(List.of(7.0), 99)).isEqualTo(7.0);
    }

    @Test
    void timingsInNanosecondsComeOutInMilliseconds() {
        assertThat(Percentiles.millis(new long[] {3_000_000, 1_500_000, 2_000_000}, 3, 50)).isEqualTo(2.0);
        assertThat(Percentiles.millis(new long[0], 0, 99)).isNaN();
    }

    @Test
    void noSamplesHaveNoPercentile() {
        assertThat(Percentiles.of(new long[4], 0, 50)).isNaN();
        assertThat(Percentiles.of(List.of(), 99)).isNaN();
    }

    @Test
    void refusesAPercentileOutsideOneToAHundred() {
        assertThatThrownBy(() -> Percentiles.of(List.of(1.0), 0)).hasMessage("percentile must be 1 to 100, got 0");
    }
}
