package io.hetgpu.gpu.bench;

import java.util.Arrays;
import java.util.List;

/**
 * Percentiles as every benchmark prints them: nearest rank, the smallest sample that at least {@code q} per cent of the
 * samples are at or below, so that a p99 is a time one request really took.
 */
public final class Percentiles {

    private Percentiles() {
    }

    /** The {@code q}-th percentile of the first {@code count} samples, which stay as they are; NaN for none. */
    public static double of(long[] samples, int count, int q) {
        if (count == 0) {
            return Double.NaN;
        }
        var sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        return sorted[rank(count, q)];
    }

    /** The {@code q}-th percentile of the first {@code count} timings in nanoseconds, in milliseconds; NaN for none. */
    public static double millis(long[] nanos, int count, int q) {
        return of(nanos, count, q) / 1e6;
    }

    /** The {@code q}-th percentile of the samples; NaN for none. */
    public static double of(List<Double> samples, int q) {
        if (samples.isEmpty()) {
            return Double.NaN;
        }
        var sorted = samples.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted[rank(sorted.length, q)];
    }

    private static int rank(int count, int q) {
        if (q < 1 || q > 100) {
            throw new IllegalArgumentException("percentile must be 1 to 100, got " + q);
        }
        return Math.max(0, (int) Math.ceil(q / 100.0 * count) - 1);
    }
}
