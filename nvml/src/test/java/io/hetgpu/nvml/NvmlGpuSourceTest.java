package io.hetgpu.nvml;

import io.hetgpu.gpu.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.nvml.NvmlDriver.HealthEvent;
import io.hetgpu.nvml.NvmlDriver.RemoteEnd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NvmlGpuSourceTest {

    /** Probes every 50 ms of real time; recovery counted on the test's own clock. */
    private static final NvmlOptions OPTIONS = NvmlOptions.defaults().withProbeInterval(Duration.ofMillis(50));

    private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));
    private final FakeNvmlDriver driver = FakeNvmlDriver.dgx1V100(RemoteEnd.GPU);
    private final List<HealthChange> seen = new CopyOnWriteArrayList<>();
    private NvmlGpuSource source;

    @AfterEach
    void closeSource() {
        if (source != null) {
            source.close();
        }
    }

    @Test
    void topologyIsDiscoveredOnceAndDescribed() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);

        assertThat(source.description()).isEqualTo("nvml (driver 470.256.02, CUDA 11.4)");
        assertThat(source.topology().size()).isEqualTo(8);
        assertThat(source.topology().links().link(0, 3).token()).isEqualTo("NV2");
        assertThat(source.topology().devices()).allMatch(d -> d.isHealthy());
    }

    @Test
    void aCriticalXidReachesListenersAndTheTopology() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);
        source.watchHealth(seen::add);
        var gpu2 = driver.devices.get(2).uuid();

        driver.events.add(new HealthEvent.CriticalXid(gpu2, 79));

        await().atMost(Duration.ofSeconds(5)).until(() -> !seen.isEmpty());
        assertThat(seen).containsExactly(new HealthChange(gpu2, DeviceHealth.UNHEALTHY,
                "XID 79 (GPU has fallen off the bus); unhealthy until the node reboots"));
        assertThat(source.topology().device(2).health()).isEqualTo(DeviceHealth.UNHEALTHY);
        assertThat(source.topology().device(1).health()).isEqualTo(DeviceHealth.HEALTHY);
    }

    @Test
    void anUnhealthyDeviceIsReportedHealthyAfterAnsweringForTheRecoveryPeriod() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);
        source.watchHealth(seen::add);
        var gpu4 = driver.devices.get(4).uuid();
        driver.silentDevices.add(4);
        driver.events.add(new HealthEvent.CriticalXid(gpu4, 8));
        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 1);

        advanceUntilProbed(Duration.ofSeconds(61));  // still silent: no recovery starts
        driver.silentDevices.clear();
        advanceUntilProbed(Duration.ofSeconds(1));   // answers from now on
        assertThat(seen).hasSize(1);
        clock.advance(Duration.ofSeconds(60));

        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 2);
        assertThat(seen.get(1)).isEqualTo(new HealthChange(gpu4, DeviceHealth.HEALTHY, "answered normally for 60 s"));
        assertThat(source.topology().device(4).isHealthy()).isTrue();
    }

    @Test
    void aGpuHeldForAResetIsClearedWhenTheWatcherSeesTheReset() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);
        source.watchHealth(seen::add);
        var gpu3 = driver.devices.get(3).uuid();
        driver.resetSignals.put(3, NvmlDriver.ResetSignals.of(1, true));
        driver.events.add(new HealthEvent.DoubleBitEcc(gpu3));
        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 1);

        advanceUntilProbed(Duration.ofDays(1));
        assertThat(source.topology().device(3).isHealthy()).as("a day of answering is no reset").isFalse();
        driver.resetSignals.put(3, NvmlDriver.ResetSignals.of(0, false));
        advanceUntilProbed(Duration.ofSeconds(5));

        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 2);
        assertThat(seen.get(1).reason()).startsWith("GPU reset seen: volatile uncorrected ECC errors back to 0 from 1");
        assertThat(source.topology().device(3).isHealthy()).isTrue();
    }

    @Test
    void aStickyMarkOutlivesTheProcessButNotAReboot(@TempDir Path temp) throws Exception {
        var options = OPTIONS.withStickyMarkFile(temp.resolve("hetgpu/gpu-health-marks"));
        source = NvmlGpuSource.open(driver, options, clock, Optional.of("boot-1"));
        var gpu5 = driver.devices.get(5).uuid();
        driver.events.add(new HealthEvent.CriticalXid(gpu5, 79));
        await().atMost(Duration.ofSeconds(5)).until(() -> !source.topology().device(5).isHealthy());
        source.close();

        source = NvmlGpuSource.open(FakeNvmlDriver.dgx1V100(RemoteEnd.GPU), options, clock, Optional.of("boot-1"));
        assertThat(source.topology().device(5).health()).as("same boot: still held").isEqualTo(DeviceHealth.UNHEALTHY);
        assertThat(source.topology().devices()).filteredOn(d -> !d.isHealthy()).hasSize(1);
        source.close();

        source = NvmlGpuSource.open(FakeNvmlDriver.dgx1V100(RemoteEnd.GPU), options, clock, Optional.of("boot-2"));
        assertThat(source.topology().devices()).as("rebooted: all clear").allMatch(d -> d.isHealthy());
        assertThat(Files.readString(temp.resolve("hetgpu/gpu-health-marks"))).doesNotContain(gpu5);
    }

    /** The watcher probes once each time the test clock passes the next probe time; it stands still otherwise. */
    private void advanceUntilProbed(Duration step) {
        int before = driver.probes.get();
        clock.advance(step);
        await().atMost(Duration.ofSeconds(5)).until(() -> driver.probes.get() > before);
    }

    @Test
    void anNvmlFailureWhileWaitingMarksEveryDeviceUnhealthy() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);
        source.watchHealth(seen::add);

        driver.waitFailure = new NvmlException("nvmlEventSetWait_v2", 999, "Unknown Error");

        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 8);
        assertThat(source.topology().devices()).noneMatch(d -> d.isHealthy());
    }

    @Test
    void aClosedHandleStopsDeliveriesAndAFaultyListenerHarmsNoOne() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);
        var handle = source.watchHealth(seen::add);
        source.watchHealth(change -> {
            throw new IllegalStateException("listener bug");
        });
        var stillWatching = new CopyOnWriteArrayList<HealthChange>();
        source.watchHealth(stillWatching::add);
        handle.close();

        driver.events.add(new HealthEvent.DoubleBitEcc(driver.devices.get(0).uuid()));

        await().atMost(Duration.ofSeconds(5)).until(() -> stillWatching.size() == 1);
        assertThat(seen).isEmpty();
    }

    @Test
    void closingStopsTheWatcherAndShutsNvmlDown() throws Exception {
        source = NvmlGpuSource.open(driver, OPTIONS, clock);

        source.close();

        assertThat(driver.eventsClosed).as("event set freed before close returns").isTrue();
        assertThat(driver.closed).isTrue();
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("hetgpu-nvml-health"));
    }

    @Test
    void aNodeWithoutGpusIsAnErrorNotAnEmptyInventory() {
        var empty = new FakeNvmlDriver(List.of(), Map.of(), (a, b) -> NvmlTopologyLevel.SYSTEM);

        assertThatThrownBy(() -> NvmlGpuSource.open(empty, OPTIONS, clock))
                .isInstanceOf(GpuDiscoveryException.class)
                .hasMessage("NVML is running but reports no GPU on this node (driver 470.256.02).");
        assertThat(empty.closed).isTrue();
    }

    @Test
    void anNvmlErrorDuringDiscoveryIsOneSentence() {
        var broken = new FakeNvmlDriver(driver.devices, driver.links, driver.ancestor) {
            @Override
            public List<NvlinkPort> nvlinks(int index) {
                throw new NvmlException("nvmlDeviceGetNvLinkState", 15, "GPU is lost");
            }
        };

        assertThatThrownBy(() -> NvmlGpuSource.open(broken, OPTIONS, clock))
                .isInstanceOf(GpuDiscoveryException.class)
                .hasMessage("NVML discovery failed: nvmlDeviceGetNvLinkState failed: GPU is lost (NVML error 15)");
        assertThat(broken.closed).isTrue();
    }
}
