package io.hetgpu.nvml;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.nvml.NvmlDriver.ResetSignals;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Decides device health from NVML events and probe results, by the class of each XID ({@link XidRules}). Pure:
 * time, the boot ID and NVML's readings come in as parameters, nothing here touches NVML, a clock or a file,
 * and every method returns the changes it caused (empty when none).
 *
 * <ul>
 *   <li>{@link XidClass#APPLICATION} XIDs change nothing.
 *   <li>{@link XidClass#TRANSIENT} XIDs, NVML failures and events NVML cannot attribute make a device (every
 *       device, for the last two) unhealthy until it has answered every probe for the recovery period; a new
 *       event restarts that period.
 *   <li>{@link XidClass#RESET_REQUIRED} XIDs and double-bit ECC errors leave a {@link StickyMark}: the device stays
 *       unhealthy, whatever it answers, until a probe's {@link ResetSignals} show a reset, or the node reboots.
 *   <li>{@link XidClass#REBOOT_REQUIRED} XIDs leave a sticky mark only a reboot clears.
 * </ul>
 *
 * A reboot is seen when the tracker starts: marks saved under another boot ID are dropped. Marks saved under
 * this boot ID (the plugin restarted, the node did not) hold as before.
 *
 * <p>Not thread-safe: one watcher thread owns it.
 */
public final class DeviceHealthTracker {

    private final XidRules xidRules;
    private final Duration recoveryPeriod;
    private final String bootId;
    private final Map<String, State> states = new LinkedHashMap<>();
    private final List<HealthChange> restored = new ArrayList<>();

    /** Devices start healthy (discovery just saw them answer), with no saved marks. */
    public DeviceHealthTracker(List<String> uuids, NvmlOptions options) {
        this(uuids, options, "unknown", List.of());
    }

    /**
     * @param bootId this boot of the node ({@link BootId})
     * @param saved  sticky marks kept by an earlier run of the plugin; those of GPUs not on this node are ignored
     */
    public DeviceHealthTracker(List<String> uuids, NvmlOptions options, String bootId, List<StickyMark> saved) {
        this.xidRules = options.xidRules();
        this.recoveryPeriod = options.recoveryPeriod();
        this.bootId = Objects.requireNonNull(bootId, "bootId");
        for (var uuid : uuids) {
            states.put(uuid, new State());
        }
        for (var mark : saved) {
            var state = states.get(mark.uuid());
            if (state == null || state.mark != null) {
                continue;
            }
            if (!mark.bootId().equals(bootId)) {
                restored.add(new HealthChange(mark.uuid(), DeviceHealth.HEALTHY, "the node rebooted since " + mark.reason()));
                continue;
            }
            state.mark = mark;
            state.health = DeviceHealth.UNHEALTHY;
            restored.add(new HealthChange(mark.uuid(), DeviceHealth.UNHEALTHY,
                    mark.reason() + "; " + mark.xidClass().rule() + " (marked before the device plugin restarted)"));
        }
    }

    /** What the saved marks did at start: devices still held, and devices a reboot has cleared. */
    public List<HealthChange> restoredChanges() {
        return List.copyOf(restored);
    }

    /** An event with no NVML readings to go with it. */
    public List<HealthChange> onEvent(NvmlDriver.HealthEvent event, Instant now) {
        return onEvent(event, ResetSignals.UNKNOWN, now);
    }

    /**
     * @param signals NVML's readings of the event's device, taken right after the event: what a later reset is
     *                measured against
     */
    public List<HealthChange> onEvent(NvmlDriver.HealthEvent event, ResetSignals signals, Instant now) {
        return switch (event) {
            case NvmlDriver.HealthEvent.CriticalXid xid ->
                    mark(xid.uuid(), xidRules.classify(xid.xid()), "XID " + xid.xid() + xidRules.describe(xid.xid()), signals);
            case NvmlDriver.HealthEvent.DoubleBitEcc ecc ->
                    mark(ecc.uuid(), xidRules.classifyDoubleBitEcc(), "double-bit ECC error", signals);
            case NvmlDriver.HealthEvent.UnidentifiedDevice unnamed -> onNvmlFailure(unnamed.detail(), now);
        };
    }

    /** NVML itself failed (an event wait, the library): no device can be trusted until probed again. */
    public List<HealthChange> onNvmlFailure(String reason, Instant now) {
        var changes = new ArrayList<HealthChange>();
        for (var uuid : states.keySet()) {
            changes.addAll(mark(uuid, XidClass.TRANSIENT, "NVML failed: " + reason, ResetSignals.UNKNOWN));
        }
        return changes;
    }

    /** A probe without NVML's reset readings. */
    public List<HealthChange> onProbe(String uuid, boolean answeredNormally, Instant now) {
        return onProbe(uuid, answeredNormally, ResetSignals.UNKNOWN, now);
    }

    /** The result of probing a device; only unhealthy devices need probing. */
    public List<HealthChange> onProbe(String uuid, boolean answeredNormally, ResetSignals signals, Instant now) {
        var state = states.get(uuid);
        if (state == null || state.health == DeviceHealth.HEALTHY) {
            return List.of();
        }
        if (state.mark != null) {
            var evidence = state.mark.resetEvidence(signals);
            if (evidence == null) {
                state.mark = state.mark.seen(signals);
                return List.of();
            }
            var cleared = state.mark;
            state.mark = null;
            state.health = DeviceHealth.HEALTHY;
            state.answeringSince = null;
            return List.of(new HealthChange(uuid, DeviceHealth.HEALTHY, evidence + " since " + cleared.reason()));
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

    /** The marks to keep across a restart of the plugin, in device order. */
    public List<StickyMark> stickyMarks() {
        return states.values().stream().filter(s -> s.mark != null).map(s -> s.mark).toList();
    }

    private List<HealthChange> mark(String uuid, XidClass xidClass, String reason, ResetSignals signals) {
        if (!xidClass.marksGpu()) {
            return List.of();
        }
        var state = states.get(uuid);
        if (state == null) {
            // An event for a device we did not discover means NVML's view and ours disagree: like an NVML failure.
            var changes = new ArrayList<HealthChange>();
            for (var known : states.keySet()) {
                changes.addAll(mark(known, XidClass.TRANSIENT, reason + " on unknown device " + uuid, ResetSignals.UNKNOWN));
            }
            return changes;
        }
        state.answeringSince = null;
        if (xidClass.sticky()) {
            state.mark = state.mark == null
                    ? new StickyMark(uuid, bootId, xidClass, reason, OptionalLong.empty(), false)
                    : state.mark.escalated(xidClass, reason);
        }
        if (state.mark != null) {
            state.mark = state.mark.seen(signals);
        }
        if (state.health == DeviceHealth.UNHEALTHY) {
            return List.of();
        }
        state.health = DeviceHealth.UNHEALTHY;
        return List.of(new HealthChange(uuid, DeviceHealth.UNHEALTHY, reason + "; " + xidClass.rule()));
    }

    private static final class State {
        DeviceHealth health = DeviceHealth.HEALTHY;
        Instant answeringSince;
        /** Set while only a reset or a reboot can make the device healthy again. */
        StickyMark mark;
    }
}
