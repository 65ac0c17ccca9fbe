package io.hetgpu.deviceplugin.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class SliceAdoptionTest {

    private static ResourceSlice slice(String name, String node, String driver, long generation) {
        return new ResourceSliceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withDriver(driver).withNodeName(node)
                .withNewPool().withName(node).withGeneration(generation).endPool().endSpec().build();
    }

    private static Device tainted(String name, String timeAdded) {
        return new DeviceBuilder().withName(name).addNewTaint().withKey(HetgpuSlice.UNHEALTHY_TAINT).withEffect("NoSchedule")
                .withTimeAdded(timeAdded).endTaint().build();
    }

    @Test
    void theHighestGenerationIsKeptTheRestOfThisNodeAndDriverDeletedAndTheNextWriteIsAboveAll() {
        var high = slice("n-gpu.hetgpu.io-b", "n", "gpu.hetgpu.io", 7);
        var low = slice("n-gpu.hetgpu.io-a", "n", "gpu.hetgpu.io", 4);
        var otherNode = slice("m-gpu.hetgpu.io-a", "m", "gpu.hetgpu.io", 9);
        var otherDriver = slice("n-gpu.nvidia.com-a", "n", "gpu.nvidia.com", 9);

        var adoption = SliceAdoption.of(List.of(low, otherNode, high, otherDriver), "gpu.hetgpu.io", "n");

        assertThat(adoption.keep()).containsSame(high);
        assertThat(adoption.extra()).containsExactly(low);
        assertThat(adoption.storedGeneration()).isEqualTo(7);
    }

    @Test
    void equalGenerationsKeepTheSameOneEveryTimeAndNoneMeansCreate() {
        var a = slice("n-gpu.hetgpu.io-a", "n", "gpu.hetgpu.io", 2);
        var b = slice("n-gpu.hetgpu.io-b", "n", "gpu.hetgpu.io", 2);
        assertThat(SliceAdoption.of(List.of(a, b), "gpu.hetgpu.io", "n").keep()).containsSame(a);
        assertThat(SliceAdoption.of(List.of(b, a), "gpu.hetgpu.io", "n").keep()).containsSame(a);
        var none = SliceAdoption.of(List.of(), "gpu.hetgpu.io", "n");
        assertThat(none.keep()).isEmpty();
        assertThat(none.storedGeneration()).isZero();
    }

    @Test
    void aTaintKeepsTheTimeItWasFirstWrittenAndADroppedTaintIsNoticed() {
        var stored = List.of(tainted("gpu-1", "2026-01-01T00:00:00Z"));
        var desired = List.of(new DeviceBuilder().withName("gpu-0").build(), tainted("gpu-1", null));

        var kept = SliceAdoption.keepTaintTimes(desired, stored);

        assertThat(kept.get(1).getTaints().get(0).getTimeAdded()).isEqualTo("2026-01-01T00:00:00Z");
        assertThat(kept.get(0)).isEqualTo(desired.get(0));
        assertThat(SliceAdoption.taintsDropped(desired, List.of(new DeviceBuilder().withName("gpu-0").build(),
                new DeviceBuilder().withName("gpu-1").build()))).isTrue();
        assertThat(SliceAdoption.taintsDropped(desired, kept)).isFalse();
        assertThat(SliceAdoption.taintsDropped(List.of(new DeviceBuilder().withName("gpu-0").build()), List.of())).isFalse();
    }
}
