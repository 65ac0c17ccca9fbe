package io.hetgpu.nvml;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * A GPU held unhealthy until evidence of a reset or a reboot, with what that evidence is measured against.
 *
 * @param bootId              the boot in which the GPU was marked; another boot means the node has rebooted since
 * @param mostUncorrectedEcc  the most volatile uncorrected ECC errors NVML counted since the mark; a lower count later
 *                            means the counters were reset with the GPU. Empty while NVML has given no count
 * @param repairPendingSeen   whether NVML has shown a row remapping or page retirement pending since the mark; none
 *                            pending afterwards means a reset applied it
 */
public record StickyMark(String uuid, String bootId, XidClass xidClass, String reason, OptionalLong mostUncorrectedEcc,
                         boolean repairPendingSeen) {

    public StickyMark {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(bootId, "bootId");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(mostUncorrectedEcc, "mostUncorrectedEcc");
        if (xidClass == null || !xidClass.sticky()) {
            throw new IllegalArgumentException("xidClass must be RESET_REQUIRED or REBOOT_REQUIRED, got " + xidClass);
        }
    }

    /** The same mark with a reading taken since folded in. */
    StickyMark seen(NvmlDriver.ResetSignals signals) {
        var most = mostUncorrectedEcc;
        if (signals.volatileUncorrectedEcc().isPresent()
                && (most.isEmpty() || signals.volatileUncorrectedEcc().getAsLong() > most.getAsLong())) {
            most = signals.volatileUncorrectedEcc();
        }
        boolean pending = repairPendingSeen || signals.memoryRepairPending().orElse(false);
        return new StickyMark(uuid, bootId, xidClass, reason, most, pending);
    }

    /** A stronger class (or the same) after another sticky event on the same GPU; the first reason stays. */
    StickyMark escalated(XidClass other, String otherReason) {
        if (other.strongest(xidClass) == xidClass) {
            return this;
        }
        return new StickyMark(uuid, bootId, other, otherReason, mostUncorrectedEcc, repairPendingSeen);
    }

    /**
     * Why the GPU counts as reset, or null when the readings do not show it. Only {@link XidClass#RESET_REQUIRED}
     * marks accept this evidence; a reboot-class mark waits for the boot ID.
     */
    String resetEvidence(NvmlDriver.ResetSignals now) {
        if (xidClass != XidClass.RESET_REQUIRED) {
            return null;
        }
        var count = now.volatileUncorrectedEcc();
        if (mostUncorrectedEcc.isPresent() && count.isPresent() && count.getAsLong() < mostUncorrectedEcc.getAsLong()) {
            return "GPU reset seen: volatile uncorrected ECC errors back to " + count.getAsLong() + " from "
                    + mostUncorrectedEcc.getAsLong();
        }
        if (repairPendingSeen && now.memoryRepairPending().isPresent() && !now.memoryRepairPending().get()) {
            return "GPU reset seen: the pending row remapping or page retirement has been applied";
        }
        return null;
    }
}
