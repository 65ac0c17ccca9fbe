package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.nvml.NvmlDriver.HealthEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DeviceHealthTrackerTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final String GPU0 = "GPU-0";
    private static final String GPU1 = "GPU-1";

    private final DeviceHealthTracker tracker = new DeviceHealthTracker(List.of(GPU0, GPU1), NvmlOptions.defaults());

    @Test
    void aCriticalXidMakesTheDeviceUnhealthyOnce() {
        var first = tracker.onEvent(new HealthEvent.CriticalXid(GPU1, 79), T0);
        var again = tracker.onEvent(new HealthEvent.CriticalXid(GPU1, 79), T0.plusSeconds(1));

        assertThat(first).containsExactly(new HealthChange(GPU1, DeviceHealth.UNHEALTHY, "XID 79 (GPU has fallen off the bus)"));
        assertThat(again).isEmpty();
        assertThat(tracker.health()).containsEntry(GPU0, DeviceHealth.HEALTHY).containsEntry(GPU1, DeviceHealth.UNHEALTHY);
    }

    @Test
    void applicationXidsAreIgnored() {
        for (long xid : new long[] {13, 31, 43, 45, 68, 109}) {
            assertThat(tracker.onEvent(new HealthEvent.CriticalXid(GPU0, xid), T0)).as("XID %d", xid).isEmpty();
        }
        assertThat(tracker.unhealthyDevices()).isEmpty();
    }

    @Test
    void theIgnoredListIsConfigurable() {
        var strict = new DeviceHealthTracker(List.of(GPU0), NvmlOptions.defaults().withIgnoredXids(Set.of(79)));

        assertThat(strict.onEvent(new HealthEvent.CriticalXid(GPU0, 79), T0)).isEmpty();
        assertThat(strict.onEvent(new HealthEvent.CriticalXid(GPU0, 13), T0)).extracting(HealthChange::reason)
                .containsExactly("XID 13");
    }

    @Test
    void aDoubleBitEccErrorMakesTheDeviceUnhealthy() {
        assertThat(tracker.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0))
                .containsExactly(new HealthChange(GPU0, DeviceHealth.UNHEALTHY, "double-bit ECC error"));
    }

    @Test
    void anNvmlFailureMakesEveryDeviceUnhealthy() {
        var changes = tracker.onNvmlFailure("nvmlEventSetWait_v2 failed: Unknown Error (NVML error 999)", T0);

        assertThat(changes).extracting(HealthChange::uuid).containsExactly(GPU0, GPU1);
        assertThat(changes).allMatch(c -> c.health() == DeviceHealth.UNHEALTHY && c.reason().startsWith("NVML failed: "));
    }

    @Test
    void eventsNvmlCannotAttributeMakeEveryDeviceUnhealthy() {
        assertThat(tracker.onEvent(new HealthEvent.UnidentifiedDevice("event on a device NVML did not name"), T0)).hasSize(2);
        var other = new DeviceHealthTracker(List.of(GPU0, GPU1), NvmlOptions.defaults());
        assertThat(other.onEvent(new HealthEvent.CriticalXid("GPU-stranger", 79), T0)).hasSize(2);
    }

    @Test
    void aDeviceComesBackAfterAnsweringForTheWholeRecoveryPeriod() {
        tracker.onEvent(new HealthEvent.CriticalXid(GPU0, 48), T0);

        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(5))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(64))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(65)))
                .containsExactly(new HealthChange(GPU0, DeviceHealth.HEALTHY, "answered normally for 60 s"));
        assertThat(tracker.unhealthyDevices()).isEmpty();
    }

    @Test
    void aFailedProbeRestartsTheRecoveryPeriod() {
        tracker.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0);
        tracker.onProbe(GPU0, true, T0.plusSeconds(5));
        tracker.onProbe(GPU0, false, T0.plusSeconds(30));

        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(65))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(124))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(125))).hasSize(1);
    }

    @Test
    void aNewCriticalEventRestartsTheRecoveryPeriod() {
        tracker.onEvent(new HealthEvent.CriticalXid(GPU0, 79), T0);
        tracker.onProbe(GPU0, true, T0.plusSeconds(5));
        tracker.onEvent(new HealthEvent.CriticalXid(GPU0, 79), T0.plusSeconds(50));

        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(70))).isEmpty();
        assertThat(tracker.onProbe(GPU0, true, T0.plusSeconds(130))).hasSize(1);
    }

    @Test
    void probingAHealthyOrUnknownDeviceChangesNothing() {
        assertThat(tracker.onProbe(GPU0, false, T0)).isEmpty();
        assertThat(tracker.onProbe("GPU-stranger", true, T0)).isEmpty();
        assertThat(tracker.health()).containsEntry(GPU0, DeviceHealth.HEALTHY);
    }

    @Test
    void theRecoveryPeriodIsConfigurable() {
        var quick = new DeviceHealthTracker(List.of(GPU0), NvmlOptions.defaults().withRecoveryPeriod(Duration.ofSeconds(10)));
        quick.onEvent(new HealthEvent.DoubleBitEcc(GPU0), T0);
        quick.onProbe(GPU0, true, T0.plusSeconds(1));

        assertThat(quick.onProbe(GPU0, true, T0.plusSeconds(11))).extracting(HealthChange::reason)
                .containsExactly("answered normally for 10 s");
    }
}
