package io.hetgpu.gpu.profile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.discovery.HealthChange;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SimulatedGpuSourceTest {

    @Test
    void describesItselfByProfile() throws Exception {
        try (var source = SimulatedGpuSource.open("dgx-a100", "gpu-node-1")) {
            assertThat(source.description()).isEqualTo("simulated:dgx-a100");
            assertThat(source.topology().devices()).hasSize(8).allSatisfy(d -> assertThat(d.isHealthy()).isTrue());
            assertThat(SimulatedGpuSource.shippedProfiles()).contains("dgx-a100", "k80-4x", "mixed").hasSize(9);
        }
    }

    @Test
    void uuidsAreStablePerNodeAndDistinctAcrossNodes() throws Exception {
        var first = uuids("dgx1-v100", "node-a");
        var again = uuids("dgx1-v100", "node-a");
        var otherNode = uuids("dgx1-v100", "node-b");
        var otherProfile = uuids("dgx1-p100", "node-a");

        assertThat(again).isEqualTo(first);
        assertThat(first).allMatch(uuid -> uuid.matches("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
        var all = new HashSet<String>();
        all.addAll(first);
        all.addAll(otherNode);
        all.addAll(otherProfile);
        assertThat(all).hasSize(24);
    }

    @Test
    void healthChangesReachEveryWatcherInOrder() throws Exception {
        try (var source = SimulatedGpuSource.open("t4-4x", "n1")) {
            var uuid = source.topology().device(2).uuid();
            var first = new LinkedBlockingQueue<HealthChange>();
            var second = new LinkedBlockingQueue<HealthChange>();
            source.watchHealth(first::add);
            source.watchHealth(second::add);

            source.setHealth(uuid, DeviceHealth.UNHEALTHY, "XID 79 (simulated)");
            source.setHealth(uuid, DeviceHealth.UNHEALTHY, "again: no change, no event");
            source.setHealth(uuid, DeviceHealth.HEALTHY, "recovered");

            var expected = List.of(new HealthChange(uuid, DeviceHealth.UNHEALTHY, "XID 79 (simulated)"),
                    new HealthChange(uuid, DeviceHealth.HEALTHY, "recovered"));
            for (var queue : List.of(first, second)) {
                assertThat(queue.poll(5, TimeUnit.SECONDS)).isEqualTo(expected.get(0));
                assertThat(queue.poll(5, TimeUnit.SECONDS)).isEqualTo(expected.get(1));
            }
            assertThat(source.topology().device(2).isHealthy()).isTrue();
        }
    }

    @Test
    void topologyShowsTheNewHealthAtOnce() throws Exception {
        try (var source = SimulatedGpuSource.open("k80-4x", "n1")) {
            var uuid = source.topology().device(5).uuid();

            source.setHealth(uuid, DeviceHealth.UNHEALTHY, "double-bit ECC");

            assertThat(source.topology().devices()).filteredOn(d -> !d.isHealthy()).extracting(GpuDevice::index).containsExactly(5);
        }
    }

    @Test
    void closedWatchStopsDeliveriesAndAFaultyWatcherHarmsNoOther() throws Exception {
        try (var source = SimulatedGpuSource.open("mixed", "n1")) {
            var uuid = source.topology().device(0).uuid();
            var stopped = new LinkedBlockingQueue<HealthChange>();
            var kept = new LinkedBlockingQueue<HealthChange>();
            var handle = source.watchHealth(stopped::add);
            source.watchHealth(change -> {
                throw new IllegalStateException("watcher bug");
            });
            source.watchHealth(kept::add);

            handle.close();
            source.setHealth(uuid, DeviceHealth.UNHEALTHY, "test");
            source.setHealth(uuid, DeviceHealth.HEALTHY, "test");

            assertThat(kept.poll(5, TimeUnit.SECONDS)).isNotNull();
            assertThat(kept.poll(5, TimeUnit.SECONDS)).isNotNull();
            // Both changes reached `kept` after the faulty watcher ran, on the one delivery thread; so none went to `stopped`.
            assertThat(stopped).isEmpty();
        }
    }

    @Test
    void unknownDeviceIsNamed() throws Exception {
        try (var source = SimulatedGpuSource.open("t4-4x", "n1")) {
            assertThatThrownBy(() -> source.setHealth("GPU-nope", DeviceHealth.UNHEALTHY, "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("GPU-nope");
        }
    }

    @Test
    void manyNodesFromOneLoadedProfile() throws Exception {
        var profile = ProfileLoader.load("dgx-h100");
        try (var a = SimulatedGpuSource.of(profile, "a"); var b = SimulatedGpuSource.of(profile, "b")) {
            assertThat(a.topology().links()).isEqualTo(b.topology().links());
            assertThat(a.topology().device(0).uuid()).isNotEqualTo(b.topology().device(0).uuid());
        }
    }

    private static List<String> uuids(String profile, String node) throws Exception {
        try (var source = SimulatedGpuSource.open(profile, node)) {
            return source.topology().devices().stream().map(GpuDevice::uuid).toList();
        }
    }
}
