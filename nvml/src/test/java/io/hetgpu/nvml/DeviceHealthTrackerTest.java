package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.nvml.NvmlDriver.HealthEvent;
import io.hetgpu.nvml.NvmlDriver.ResetSignals;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class DeviceHealthTrackerTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration A_DAY = Duration.ofDays(1);
    private static final String GPU0 = "GPU-0";
    private static final String GPU1 = "GPU-1";
    private static final String BOOT = "3f0c2a1e-boot-one";
    private static final String NEXT_BOOT = "9b7d4c2f-boot-two";

    private final DeviceHealthTracker tracker = tracker(NvmlOptions.defaults());

    private static DeviceHealthTracker tracker(NvmlOptions options) {
        return new DeviceHealthTracker(List.of(GPU0, GPU1), options, BOOT, List.of());
    }

    private static HealthEvent xid(long code) {
        return new HealthEvent.CriticalXid(GPU0, code);
    }

    /** Probes GPU0 every 5 s for the whole span, always answering, with the same readings; returns every change. */
    private static List<HealthChange> probeFor(DeviceHealthTracker tracker, Duration span, ResetSignals signals) {
        var changes = new java.util.ArrayList<HealthChange>();
        for (long s = 5; s <= span.toSeconds(); s += 5) {
            changes.addAll(tracker.onProbe(GPU0, true, signals, T0.plusSeconds(s)));
        }
        return changes;
    }

    @Nested
    class ApplicationXids {

        @Test
        void neverMarkAGpu() {
            for (long code : new long[] {13, 31, 43, 45, 68, 109}) {
                assertThat(tracker.onEvent(xid(code), T0)).as("XID %d", code).isEmpty();
            }
            assertThat(tracker.unhealthyDevices()).isEmpty();
            assertThat(tracker.stickyMarks()).isEmpty();
        }
    }

    @Nested
    class TransientConditions {

        @Test
        void markOnceAndRecoverAfterAnsweringForTheWholeRecoveryPeriod() {
            var first = tracker.onEvent(xid(8), T0);
            var again = tracker.onEvent(xid(8), T0.plusSeconds(1));

            assertThat(first).containsExactly(new HealthChange(GPU0, DeviceHealth.UNHEALTHY,
                    "XID 8 (GPU stopped processing (idle timeout)); healthy again after answering normally for the recovery period"));
            assertThat(again).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(5))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(64))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(65)))
                    .containsExactly(new HealthChange(GPU0, DeviceHealth.HEALTHY, "answered normally for 60 s"));
            assertThat(tracker.unhealthyDevices()).isEmpty();
            assertThat(tracker.stickyMarks()).as("nothing to remember across a restart").isEmpty();
        }

        @Test
        void aFailedProbeRestartsTheRecoveryPeriod() {
            tracker.onEvent(xid(32), T0);
            tracker.onProbe(GPU0, true, T0.plusSeconds(5));
            tracker.onProbe(GPU0, false, T0.plusSeconds(30));

            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(65))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(124))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(125))).hasSize(1);
        }

        @Test
        void aNewEventRestartsTheRecoveryPeriod() {
            tracker.onEvent(xid(8), T0);
            tracker.onProbe(GPU0, true, T0.plusSeconds(5));
            tracker.onEvent(xid(8), T0.plusSeconds(50));

            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(70))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(130))).hasSize(1);
        }

        @Test
        void theRecoveryPeriodIsConfigurable() {
            var quick = tracker(NvmlOptions.defaults().withRecoveryPeriod(Duration.ofSeconds(10)));
            quick.onEvent(xid(8), T0);
            quick.onProbe(GPU0, true, T0.plusSeconds(1));

            assertThat(quick.onProbe(GPU0, true, T0.plusSeconds(11))).extracting(HealthChange::reason)
                    .containsExactly("answered normally for 10 s");
        }

        @Test
        void anNvmlFailureMarksEveryDeviceUntilItAnswersAgain() {
            var changes = tracker.onNvmlFailure("nvmlEventSetWait_v2 failed: Unknown Error (NVML error 999)", T0);

            assertThat(changes).extracting(HealthChange::uuid).containsExactly(GPU0, GPU1);
            assertThat(changes).allMatch(c -> c.health() == DeviceHealth.UNHEALTHY && c.reason().startsWith("NVML failed: "));
            assertThat(probeFor(tracker, Duration.ofSeconds(65), ResetSignals.UNKNOWN)).hasSize(1);
        }

        @Test
        void eventsNvmlCannotAttributeMarkEveryDevice() {
            assertThat(tracker.onEvent(new HealthEvent.UnidentifiedDevice("event on a device NVML did not name"), T0)).hasSize(2);
            var other = tracker(NvmlOptions.defaults());
            assertThat(other.onEvent(new HealthEvent.CriticalXid("GPU-stranger", 79), T0)).hasSize(2);
            assertThat(other.stickyMarks()).as("a device we do not know cannot be held for a reset").isEmpty();
        }

        @Test
        void probingAHealthyOrUnknownDeviceChangesNothing() {
            assertThat(tracker.onProbe(GPU0, false, T0)).isEmpty();
            assertThat(tracker.onProbe("GPU-stranger", true, T0)).isEmpty();
            assertThat(tracker.health()).containsEntry(GPU0, DeviceHealth.HEALTHY);
        }
    }

    @Nested
    class ResetRequired {

        @Test
        void everyResetXidAndDoubleBitEccEventStaysUnhealthyPastAnyRecoveryPeriod() {
            for (long code : new long[] {48, 63, 64, 74, 92, 94, 95, 119, 120}) {
                var fresh = tracker(NvmlOptions.defaults());
                assertThat(fresh.onEvent(xid(code), ResetSignals.of(1, true), T0)).as("XID %d", code)
                        .singleElement().extracting(HealthChange::reason).asString()
                        .endsWith("unhealthy until NVML shows a GPU reset (or driver reload), or the node reboots");

                assertThat(probeFor(fresh, A_DAY, ResetSignals.of(1, true))).as("XID %d", code).isEmpty();
                assertThat(fresh.unhealthyDevices()).as("XID %d", code).containsExactly(GPU0);
            }
            var ecc = tracker(NvmlOptions.defaults());
            ecc.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0);
            assertThat(probeFor(ecc, A_DAY, ResetSignals.UNKNOWN)).isEmpty();
            assertThat(ecc.stickyMarks()).extracting(StickyMark::xidClass).containsExactly(XidClass.RESET_REQUIRED);
        }

        @Test
        void clearsWhenTheVolatileUncorrectedEccCountDrops() {
            tracker.onEvent(new HealthEvent.DoubleBitEcc(GPU0), ResetSignals.of(2, false), T0);
            assertThat(tracker.onProbe(GPU0, true, ResetSignals.of(3, false), T0.plusSeconds(5))).isEmpty();

            assertThat(tracker.onProbe(GPU0, true, ResetSignals.of(0, false), T0.plusSeconds(10)))
                    .containsExactly(new HealthChange(GPU0, DeviceHealth.HEALTHY,
                            "GPU reset seen: volatile uncorrected ECC errors back to 0 from 3 since double-bit ECC error"));
            assertThat(tracker.stickyMarks()).isEmpty();
        }

        @Test
        void clearsWhenThePendingRemapIsApplied() {
            tracker.onEvent(xid(63), ResetSignals.of(0, true), T0);
            assertThat(tracker.onProbe(GPU0, true, ResetSignals.of(0, true), T0.plusSeconds(5))).isEmpty();

            assertThat(tracker.onProbe(GPU0, false, ResetSignals.of(0, false), T0.plusSeconds(10)))
                    .singleElement().extracting(HealthChange::reason).asString()
                    .startsWith("GPU reset seen: the pending row remapping or page retirement has been applied since XID 63");
        }

        @Test
        void readingsThatNeverShowedTheFaultAreNoEvidence() {
            // An NVLink error leaves no ECC count and no pending remap behind: nothing NVML shows can prove a reset.
            tracker.onEvent(xid(74), ResetSignals.of(0, false), T0);

            assertThat(probeFor(tracker, A_DAY, ResetSignals.of(0, false))).isEmpty();
            assertThat(tracker.onProbe(GPU0, true, ResetSignals.UNKNOWN, T0.plus(A_DAY))).isEmpty();
            assertThat(tracker.unhealthyDevices()).containsExactly(GPU0);
        }

        @Test
        void aTransientEventDoesNotLetTimeClearIt() {
            tracker.onEvent(xid(48), ResetSignals.of(1, false), T0);
            tracker.onEvent(xid(8), T0.plusSeconds(1));
            tracker.onNvmlFailure("gone", T0.plusSeconds(2));

            assertThat(probeFor(tracker, A_DAY, ResetSignals.of(1, false))).isEmpty();
            assertThat(tracker.stickyMarks()).extracting(StickyMark::xidClass).containsExactly(XidClass.RESET_REQUIRED);
        }

        @Test
        void anXidTheCatalogueDoesNotKnowIsHeldForAReset() {
            assertThat(tracker.onEvent(xid(4242), T0)).extracting(HealthChange::reason)
                    .containsExactly("XID 4242; unhealthy until NVML shows a GPU reset (or driver reload), or the node reboots");
            assertThat(probeFor(tracker, A_DAY, ResetSignals.UNKNOWN)).isEmpty();
        }
    }

    @Nested
    class RebootRequired {

        @Test
        void aGpuOffTheBusIgnoresResetEvidence() {
            assertThat(tracker.onEvent(xid(79), ResetSignals.of(3, true), T0))
                    .containsExactly(new HealthChange(GPU0, DeviceHealth.UNHEALTHY,
                            "XID 79 (GPU has fallen off the bus); unhealthy until the node reboots"));

            assertThat(probeFor(tracker, A_DAY, ResetSignals.of(0, false))).isEmpty();
            assertThat(tracker.unhealthyDevices()).containsExactly(GPU0);
        }

        @Test
        void outranksAResetMarkOnTheSameGpu() {
            tracker.onEvent(xid(48), ResetSignals.of(2, false), T0);
            tracker.onEvent(xid(79), T0.plusSeconds(1));

            assertThat(tracker.onProbe(GPU0, true, ResetSignals.of(0, false), T0.plusSeconds(5))).isEmpty();
            assertThat(tracker.stickyMarks()).singleElement().satisfies(mark -> {
                assertThat(mark.xidClass()).isEqualTo(XidClass.REBOOT_REQUIRED);
                assertThat(mark.reason()).isEqualTo("XID 79 (GPU has fallen off the bus)");
            });
        }
    }

    @Nested
    class AcrossRestarts {

        @Test
        void aRestartOfThePluginKeepsTheMarkAndItsEvidence() {
            tracker.onEvent(new HealthEvent.DoubleBitEcc(GPU0), ResetSignals.of(2, false), T0);
            tracker.onEvent(new HealthEvent.CriticalXid(GPU1, 79), T0);

            var restarted = new DeviceHealthTracker(List.of(GPU0, GPU1), NvmlOptions.defaults(), BOOT, tracker.stickyMarks());

            assertThat(restarted.restoredChanges()).extracting(HealthChange::uuid, HealthChange::health).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(GPU0, DeviceHealth.UNHEALTHY),
                    org.assertj.core.groups.Tuple.tuple(GPU1, DeviceHealth.UNHEALTHY));
            assertThat(restarted.restoredChanges().get(1).reason())
                    .isEqualTo("XID 79 (GPU has fallen off the bus); unhealthy until the node reboots (marked before the device plugin restarted)");
            assertThat(probeFor(restarted, A_DAY, ResetSignals.of(2, false))).isEmpty();
            assertThat(restarted.onProbe(GPU0, true, ResetSignals.of(0, false), T0.plus(A_DAY).plusSeconds(5)))
                    .as("the ECC count at the failure came through the restart").hasSize(1);
            assertThat(restarted.unhealthyDevices()).containsExactly(GPU1);
        }

        @Test
        void aRebootClearsEveryMark() {
            tracker.onEvent(xid(79), T0);
            tracker.onEvent(new HealthEvent.CriticalXid(GPU1, 74), T0);

            var afterReboot = new DeviceHealthTracker(List.of(GPU0, GPU1), NvmlOptions.defaults(), NEXT_BOOT, tracker.stickyMarks());

            assertThat(afterReboot.unhealthyDevices()).isEmpty();
            assertThat(afterReboot.stickyMarks()).isEmpty();
            assertThat(afterReboot.restoredChanges()).containsExactly(
                    new HealthChange(GPU0, DeviceHealth.HEALTHY, "the node rebooted since XID 79 (GPU has fallen off the bus)"),
                    new HealthChange(GPU1, DeviceHealth.HEALTHY, "the node rebooted since XID 74 (NVLink error)"));
        }

        @Test
        void marksOfGpusNoLongerOnTheNodeAreDropped() {
            var gone = new StickyMark("GPU-removed", BOOT, XidClass.REBOOT_REQUIRED, "XID 79", OptionalLong.empty(), false);

            var restarted = new DeviceHealthTracker(List.of(GPU0), NvmlOptions.defaults(), BOOT, List.of(gone));

            assertThat(restarted.restoredChanges()).isEmpty();
            assertThat(restarted.stickyMarks()).isEmpty();
        }
    }

    @Nested
    class AdminOverrides {

        private DeviceHealthTracker with(XidSelection skipped, XidSelection critical) {
            return tracker(NvmlOptions.defaults().withXidRules(new XidRules(XidCatalogue.nvidia(), skipped, critical)));
        }

        @Test
        void skippedXidsNeverMark() {
            var skipping = with(XidSelection.of(79, 74), XidSelection.NONE);

            assertThat(skipping.onEvent(xid(79), T0)).isEmpty();
            assertThat(skipping.onEvent(xid(74), T0)).isEmpty();
            assertThat(skipping.onEvent(xid(48), T0)).hasSize(1);
        }

        @Test
        void skippingXid48SkipsDoubleBitEccEventsToo() {
            var skipping = with(XidSelection.of(48), XidSelection.NONE);

            assertThat(skipping.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0)).isEmpty();
        }

        @Test
        void skippingAllTurnsXidAndEccChecksOffButNotNvmlFailures() {
            var off = with(XidSelection.ALL, XidSelection.NONE);

            assertThat(off.onEvent(xid(79), T0)).isEmpty();
            assertThat(off.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0)).isEmpty();
            assertThat(off.onNvmlFailure("gone", T0)).hasSize(2);
        }

        @Test
        void criticalXidsMarkEvenWhenSkippedOrCataloguedAsApplicationFaults() {
            var strict = with(XidSelection.ALL, XidSelection.of(13, 79, 8));

            assertThat(strict.onEvent(xid(13), T0)).extracting(HealthChange::reason).containsExactly(
                    "XID 13 (graphics engine exception); unhealthy until NVML shows a GPU reset (or driver reload), or the node reboots");
            assertThat(strict.onEvent(new HealthEvent.CriticalXid(GPU1, 8), T0)).extracting(HealthChange::reason)
                    .allMatch(reason -> reason.endsWith("healthy again after answering normally for the recovery period"));
            assertThat(strict.onEvent(new HealthEvent.CriticalXid(GPU1, 31), T0)).isEmpty();
            assertThat(strict.stickyMarks()).extracting(StickyMark::uuid).containsExactly(GPU0);
        }
    }

    @Test
    void readingsWithoutAnyFieldChangeNothing() {
        tracker.onEvent(xid(48), new ResetSignals(OptionalLong.of(1), Optional.empty()), T0);

        assertThat(tracker.onProbe(GPU0, true, new ResetSignals(OptionalLong.empty(), Optional.of(false)), T0.plusSeconds(5))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, new ResetSignals(OptionalLong.of(0), Optional.empty()), T0.plusSeconds(10))).hasSize(1);
    }
}
