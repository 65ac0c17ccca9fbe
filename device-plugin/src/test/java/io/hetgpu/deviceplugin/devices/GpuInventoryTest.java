package io.hetgpu.deviceplugin.devices;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.HealthChange;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class GpuInventoryTest {

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final GpuInventory inventory = new GpuInventory(dgx1);
    private final String gpu2 = dgx1.device(2).uuid();

    @Test
    void watchersGetTheCurrentStateAtOnceThenEachRealChangeInOrder() {
        var seen = new ArrayList<NodeTopology>();
        var watch = inventory.watch(seen::add);

        assertThat(inventory.apply(new HealthChange(gpu2, DeviceHealth.UNHEALTHY, "XID 79"))).isTrue();
        assertThat(inventory.apply(new HealthChange(gpu2, DeviceHealth.UNHEALTHY, "XID 79 again"))).isFalse();
        assertThat(inventory.apply(new HealthChange("GPU-elsewhere", DeviceHealth.UNHEALTHY, "?"))).isFalse();
        assertThat(inventory.apply(new HealthChange(gpu2, DeviceHealth.HEALTHY, "recovered"))).isTrue();
        watch.close();
        inventory.apply(new HealthChange(gpu2, DeviceHealth.UNHEALTHY, "after close"));

        assertThat(seen).extracting(topology -> topology.device(2).health())
                .containsExactly(DeviceHealth.HEALTHY, DeviceHealth.UNHEALTHY, DeviceHealth.HEALTHY);
    }

    @Test
    void checkNamesUnknownAndUnhealthyDevices() {
        inventory.apply(new HealthChange(gpu2, DeviceHealth.UNHEALTHY, "XID 48"));

        var check = inventory.check(List.of(dgx1.device(0).uuid(), gpu2, "GPU-x"));

        assertThat(check.ok()).isFalse();
        assertThat(check.describe()).isEqualTo("cannot allocate unknown device IDs [GPU-x] and unhealthy device IDs [" + gpu2 + "]");
        assertThat(inventory.check(List.of(dgx1.device(0).uuid())).ok()).isTrue();
    }

    @Test
    void checkNamesADeviceGivenTwiceOnce() {
        var gpu0 = dgx1.device(0).uuid();

        var check = inventory.check(List.of(gpu0, gpu0, dgx1.device(1).uuid(), gpu0));

        assertThat(check.ok()).isFalse();
        assertThat(check.describe()).isEqualTo("cannot allocate device IDs given twice [" + gpu0 + "]");
    }

    @Test
    void containerEditsFollowTheStrategies() {
        var ids = List.of("GPU-a", "GPU-b");
        assertThat(ContainerEdits.forDevices(ids, Set.of(DeviceListStrategy.ENVVAR)))
                .isEqualTo(new ContainerEdits(java.util.Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-a,GPU-b"), List.of()));
        assertThat(ContainerEdits.forDevices(ids, Set.of(DeviceListStrategy.CDI_CRI)))
                .isEqualTo(new ContainerEdits(java.util.Map.of(), List.of("nvidia.com/gpu=GPU-a", "nvidia.com/gpu=GPU-b")));
    }
}
