package io.hetgpu.nvml;

import java.time.Duration;
import java.util.Set;

/**
 * How NVML discovery watches device health.
 *
 * @param ignoredXids    XID codes that are application faults (a bad kernel, a killed process), not a sick GPU;
 *                       NVIDIA's device plugin ignores the same default set
 * @param recoveryPeriod how long an unhealthy device must answer normally before it is reported healthy again
 * @param probeInterval  how often unhealthy devices are probed (and the longest the watcher blocks in NVML)
 */
public record NvmlOptions(Set<Integer> ignoredXids, Duration recoveryPeriod, Duration probeInterval) {

    /** 13 graphics engine exception, 31 MMU fault, 43 GPU stopped processing, 45 preemptive cleanup,
     *  68 video processor exception, 109 context switch timeout: all raised by faulty applications. */
    public static final Set<Integer> APPLICATION_XIDS = Set.of(13, 31, 43, 45, 68, 109);

    public NvmlOptions {
        if (ignoredXids == null) {
            throw new IllegalArgumentException("ignoredXids must not be null (use an empty set to ignore none)");
        }
        for (var xid : ignoredXids) {
            if (xid == null || xid <= 0) {
                throw new IllegalArgumentException("ignoredXids must hold positive XID codes, got " + xid);
            }
        }
        ignoredXids = Set.copyOf(ignoredXids);
        requirePositive(recoveryPeriod, "recoveryPeriod");
        requirePositive(probeInterval, "probeInterval");
        if (probeInterval.compareTo(recoveryPeriod) > 0) {
            throw new IllegalArgumentException("probeInterval (" + probeInterval + ") must not be longer than recoveryPeriod ("
                    + recoveryPeriod + "): a device could never be seen answering for the whole period");
        }
    }

    /** Application XIDs ignored, 60 s recovery, a probe every 5 s. */
    public static NvmlOptions defaults() {
        return new NvmlOptions(APPLICATION_XIDS, Duration.ofSeconds(60), Duration.ofSeconds(5));
    }

    public NvmlOptions withIgnoredXids(Set<Integer> xids) {
        return new NvmlOptions(xids, recoveryPeriod, probeInterval);
    }

    public NvmlOptions withRecoveryPeriod(Duration period) {
        return new NvmlOptions(ignoredXids, period, probeInterval);
    }

    public NvmlOptions withProbeInterval(Duration interval) {
        return new NvmlOptions(ignoredXids, recoveryPeriod, interval);
    }

    private static void requirePositive(Duration value, String field) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be a positive duration, got " + value);
        }
    }
}
