package io.hetgpu.nvml;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How NVML discovery watches device health.
 *
 * @param xidRules       which XIDs mark a GPU and what clears the mark: NVIDIA's catalogue and an admin's overrides
 * @param recoveryPeriod how long a device unhealthy for a transient reason must answer normally before it is reported
 *                       healthy again
 * @param probeInterval  how often unhealthy devices are probed (and the longest the watcher blocks in NVML)
 * @param stickyMarkFile where GPUs held until a reset or a reboot are remembered across restarts of the process;
 *                       empty: they are held only while it runs
 */
public record NvmlOptions(XidRules xidRules, Duration recoveryPeriod, Duration probeInterval, Optional<Path> stickyMarkFile) {

    public NvmlOptions {
        if (xidRules == null) {
            throw new IllegalArgumentException("xidRules must not be null (XidRules.defaults() is NVIDIA's catalogue)");
        }
        requirePositive(recoveryPeriod, "recoveryPeriod");
        requirePositive(probeInterval, "probeInterval");
        if (probeInterval.compareTo(recoveryPeriod) > 0) {
            throw new IllegalArgumentException("probeInterval (" + probeInterval + ") must not be longer than recoveryPeriod ("
                    + recoveryPeriod + "): a device could never be seen answering for the whole period");
        }
        Objects.requireNonNull(stickyMarkFile, "stickyMarkFile");
    }

    /** NVIDIA's XID catalogue, 60 s recovery, a probe every 5 s, sticky marks kept in memory only. */
    public static NvmlOptions defaults() {
        return new NvmlOptions(XidRules.defaults(), Duration.ofSeconds(60), Duration.ofSeconds(5), Optional.empty());
    }

    public NvmlOptions withXidRules(XidRules rules) {
        return new NvmlOptions(rules, recoveryPeriod, probeInterval, stickyMarkFile);
    }

    public NvmlOptions withRecoveryPeriod(Duration period) {
        return new NvmlOptions(xidRules, period, probeInterval, stickyMarkFile);
    }

    public NvmlOptions withProbeInterval(Duration interval) {
        return new NvmlOptions(xidRules, recoveryPeriod, interval, stickyMarkFile);
    }

    public NvmlOptions withStickyMarkFile(Path file) {
        return new NvmlOptions(xidRules, recoveryPeriod, probeInterval, Optional.of(file));
    }

    private static void requirePositive(Duration value, String field) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be a positive duration, got " + value);
        }
    }
}
