package io.hetgpu.nvml;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.discovery.HealthChange;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides device health from NVML events and probe results. Pure: time comes in as a parameter, nothing
 * here touches NVML or a clock, and every method returns the changes it caused (empty when none).
 *
 * <p>A critical XID (one not in the ignored list) or a double-bit ECC error makes a device unhealthy; an
 * NVML failure, or an event NVML cannot attribute to a device, makes every device unhealthy. Unlike
 * NVIDIA's plugin, an unhealthy device comes back: once it has answered every probe for the whole
 * recovery period, it is healthy again. A new critical event restarts that period.
 *
 * <p>Not thread-safe: one watcher thread owns it.
 */
public final class DeviceHealthTracker {

    /** Short descriptions of the XIDs seen most often on sick GPUs, for logs and events. */
    private static final Map<Long, String> XID_NAMES = Map.of(
            48L, "double-bit ECC error",
            63L, "ECC page retirement or row remapping",
            64L, "ECC page retirement or row remapping failure",
            74L, "NVLink error",
            79L, "GPU has fallen off the bus",
            92L, "high single-bit ECC error rate",
            94L, "contained ECC error",
            95L, "uncontained ECC error",
            119L, "GSP RPC timeout",
            120L, "GSP error");

    private final Set<Integer> ignoredXids;
    private final Duration recoveryPeriod;
    private final Map<String, State> states = new LinkedHashMap<>();

    /** Devices start healthy: discovery just saw them answer. */
    public DeviceHealthTracker(List<String> uuids, NvmlOptions options) {
        this.ignoredXids = options.ignoredXids();
        this.recoveryPeriod = options.recoveryPeriod();
        for (var uuid : uuids) {
            states.put(uuid, new State());
        }
    }

    public List<HealthChange> onEvent(NvmlDriver.HealthEvent event, Instant now) {
        return switch (event) {
            case NvmlDriver.HealthEvent.CriticalXid xid -> isApplicationFault(xid.xid())
                    ? List.of()
                    : markUnhealthy(xid.uuid(), "XID " + xid.xid() + describe(xid.xid()));
            case NvmlDriver.HealthEvent.DoubleBitEcc ecc -> markUnhealthy(ecc.uuid(), "double-bit ECC error");
            case NvmlDriver.HealthEvent.UnidentifiedDevice unnamed -> onNvmlFailure(unnamed.detail(), now);
        };
    }

    /** NVML itself failed (an event wait, the library): no device can be trusted until probed again. */
    public List<HealthChange> onNvmlFailure(String reason, Instant now) {
        var changes = new ArrayList<HealthChange>();
        for (var uuid : states.keySet()) {
            changes.addAll(markUnhealthy(uuid, "NVML failed: " + reason));
        }
        return changes;
    }

    /** The result of probing a device; only unhealthy devices need probing. */
    public List<HealthChange> onProbe(String uuid, boolean answeredNormally, Instant now) {
        var state = states.get(uuid);
        if (state == null || state.health == DeviceHealth.HEALTHY) {
            return List.of();
        }
        if (!answeredNormally) {
            state.answeringSince = null;
            return List.of();
        }
        if (state.answeringSince == null) {
            state.answeringSince = now;
        }
        if (now.isBefore(state.answeringSince.plus(recoveryPeriod))) {
            return List.of();
        }
        state.health = DeviceHealth.HEALTHY;
        state.answeringSince = null;
        return List.of(new HealthChange(uuid, DeviceHealth.HEALTHY,
                "answered normally for " + recoveryPeriod.toSeconds() + " s"));
    }

    public List<String> unhealthyDevices() {
        return states.entrySet().stream().filter(e -> e.getValue().health == DeviceHealth.UNHEALTHY)
                .map(Map.Entry::getKey).toList();
    }

    public Map<String, DeviceHealth> health() {
        var health = new LinkedHashMap<String, DeviceHealth>();
        states.forEach((uuid, state) -> health.put(uuid, state.health));
        return health;
    }

    private List<HealthChange> markUnhealthy(String uuid, String reason) {
        var state = states.get(uuid);
        if (state == null) {
            // An event for a device we did not discover means NVML's view and ours disagree.
            var changes = new ArrayList<HealthChange>();
            for (var known : states.keySet()) {
                changes.addAll(markUnhealthy(known, reason + " on unknown device " + uuid));
            }
            return changes;
        }
        state.answeringSince = null;
        if (state.health == DeviceHealth.UNHEALTHY) {
            return List.of();
        }
        state.health = DeviceHealth.UNHEALTHY;
        return List.of(new HealthChange(uuid, DeviceHealth.UNHEALTHY, reason));
    }

    private boolean isApplicationFault(long xid) {
        return xid > 0 && xid <= Integer.MAX_VALUE && ignoredXids.contains((int) xid);
    }

    private static String describe(long xid) {
        var name = XID_NAMES.get(xid);
        return name == null ? "" : " (" + name + ")";
    }

    private static final class State {
        DeviceHealth health = DeviceHealth.HEALTHY;
        Instant answeringSince;
    }
}
