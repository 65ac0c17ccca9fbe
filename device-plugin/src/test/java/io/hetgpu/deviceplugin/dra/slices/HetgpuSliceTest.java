package io.hetgpu.deviceplugin.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice.Unhealthy;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HetgpuSliceTest {

    private final NodeTopology dgx1 = Fixtures.dgx1V100();

    @Test
    void aDgx1SliceIsOnePoolNamedAfterTheNodeWithEveryGpuTypedAndItsNvlinkSets() {
        var devices = HetgpuSlice.devices(dgx1, CardCatalog.defaults(), Map.of(0, "pci0000:00"), Unhealthy.TAINTED);
        var spec = HetgpuSlice.spec("gpu.hetgpu.io", "dgx-1", 3, devices);

        assertThat(spec.getDriver()).isEqualTo("gpu.hetgpu.io");
        assertThat(spec.getNodeName()).isEqualTo("dgx-1");
        assertThat(spec.getPool().getName()).isEqualTo("dgx-1");
        assertThat(spec.getPool().getGeneration()).isEqualTo(3L);
        assertThat(spec.getPool().getResourceSliceCount()).isEqualTo(1L);
        assertThat(spec.getDevices()).extracting(Device::getName).containsExactly("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7");

        var first = spec.getDevices().get(0).getAttributes();
        assertThat(first.get("uuid").getString()).isEqualTo(dgx1.device(0).uuid());
        assertThat(first.get("model").getString()).isEqualTo("V100");
        assertThat(first.get("family").getString()).isEqualTo("volta");
        assertThat(first.get("tier").getInt()).isPositive();
        assertThat(first.get("cudaComputeCapability").getVersion()).isEqualTo("7.0.0");
        assertThat(first.get("resource.kubernetes.io/pcieRoot").getString()).isEqualTo("pci0000:00");
        assertThat(first.get("resource.kubernetes.io/pciBusID").getString()).isEqualTo(dgx1.device(0).pciBusId());
        assertThat(spec.getDevices().get(1).getAttributes()).doesNotContainKey("resource.kubernetes.io/pcieRoot");
        // Each GPU of a DGX-1 is in an NVLink pair, a quad and the one set of eight; a quad is four GPUs.
        assertThat(spec.getDevices()).allSatisfy(d -> assertThat(d.getAttributes()).containsKeys("nvlinkSet2", "nvlinkSet4", "nvlinkSet8"));
        assertThat(spec.getDevices()).filteredOn(d -> d.getAttributes().get("nvlinkSet4").getString().equals(first.get("nvlinkSet4").getString()))
                .hasSize(4);
        assertThat(spec.getDevices().get(0).getCapacity().get("memory").getValue())
                .isEqualTo(new Quantity(dgx1.device(0).memoryMiB() + "Mi"));
        assertThat(spec.getDevices()).allSatisfy(d -> assertThat(d.getTaints()).isNullOrEmpty());
    }

    @Test
    void anUnhealthyGpuIsTaintedOrLeftOutAndBackWhenItRecovers() {
        var sick = dgx1.withHealth(Map.of(dgx1.device(2).uuid(), DeviceHealth.UNHEALTHY));

        var tainted = HetgpuSlice.devices(sick, CardCatalog.defaults(), Map.of(), Unhealthy.TAINTED);
        assertThat(tainted).hasSize(8);
        assertThat(tainted.get(2).getTaints()).singleElement().satisfies(taint -> {
            assertThat(taint.getKey()).isEqualTo("gpu.hetgpu.io/unhealthy");
            assertThat(taint.getEffect()).isEqualTo("NoSchedule");
        });
        assertThat(tainted).filteredOn(d -> d.getTaints() != null && !d.getTaints().isEmpty()).hasSize(1);

        var leftOut = HetgpuSlice.devices(sick, CardCatalog.defaults(), Map.of(), Unhealthy.LEFT_OUT);
        assertThat(leftOut).extracting(Device::getName).doesNotContain("gpu-2").hasSize(7);

        var recovered = sick.withHealth(Map.of(dgx1.device(2).uuid(), DeviceHealth.HEALTHY));
        assertThat(HetgpuSlice.devices(recovered, CardCatalog.defaults(), Map.of(), Unhealthy.LEFT_OUT))
                .isEqualTo(HetgpuSlice.devices(dgx1, CardCatalog.defaults(), Map.of(), Unhealthy.TAINTED));
    }

    @Test
    void memoryIsWrittenInTheFormTheApiServerKeeps() {
        assertThat(HetgpuSlice.memory(16L << 30)).isEqualTo(new Quantity("16Gi"));
        assertThat(HetgpuSlice.memory(81559L << 20)).isEqualTo(new Quantity("81559Mi"));
        assertThat(HetgpuSlice.memory(1000)).isEqualTo(new Quantity("1000"));
        assertThat(Quantity.getAmountInBytes(HetgpuSlice.memory(81559L << 20)).longValueExact()).isEqualTo(81559L << 20);
    }

    @Test
    void aSimulatedNodesSliceHasEveryGpuAtGenerationOne() {
        var slice = HetgpuSlice.of("sim-1", dgx1, CardCatalog.defaults());
        assertThat(slice.getMetadata().getName()).isEqualTo("sim-1-gpu.hetgpu.io");
        assertThat(slice.getSpec().getPool().getGeneration()).isEqualTo(1L);
        assertThat(slice.getSpec().getDevices()).hasSize(8);
    }
}
