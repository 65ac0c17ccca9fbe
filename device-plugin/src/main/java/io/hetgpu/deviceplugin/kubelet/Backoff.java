package io.hetgpu.deviceplugin.kubelet;

import java.time.Duration;
import java.util.Objects;

/**
 * Capped exponential backoff with jitter: retry {@code n} (counting from 0) waits {@code first × 2ⁿ},
 * never more than {@code max}, less a random share of up to {@code jitter} of it. The jitter keeps the
 * plugins of many nodes from retrying a restarted kubelet (or API server) in lockstep; the cap keeps a
 * plugin from sleeping long after kubelet is back.
 *
 * @param first  the wait before the first retry
 * @param max    the longest wait
 * @param jitter the largest share of a wait taken off at random, 0 (none) to 1 (anything down to zero)
 */
public record Backoff(Duration first, Duration max, double jitter) {

    /** kubelet registration: 100 ms, 200 ms, … up to 10 s, each 0–50 % shorter at random. */
    public static final Backoff KUBELET = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), 0.5);

    public Backoff {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(max, "max");
        if (first.isNegative() || first.isZero()) {
            throw new IllegalArgumentException("backoff first must be positive, got " + first);
        }
        if (max.compareTo(first) < 0) {
            throw new IllegalArgumentException("backoff max must be at least first (" + first + "), got " + max);
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw new IllegalArgumentException("backoff jitter must be between 0 and 1, got " + jitter);
        }
    }

    /**
     * The wait before retry number {@code attempt}.
     *
     * @param random a uniformly random number in [0, 1); how much of the jitter is taken off
     */
    public Duration delay(int attempt, double random) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt must be 0 or more, got " + attempt);
        }
        if (!(random >= 0 && random < 1)) {
            throw new IllegalArgumentException("random must be in [0, 1), got " + random);
        }
        long cap = max.toNanos();
        long base = first.toNanos();
        // base × 2^attempt > cap  ⇔  base > ⌊cap / 2^attempt⌋, which cannot overflow.
        long capped = attempt >= Long.SIZE - 1 || base > cap >> attempt ? cap : base << attempt;
        long jittered = capped - (long) (capped * jitter * random);
        return Duration.ofNanos(Math.max(1, jittered));
    }
}
