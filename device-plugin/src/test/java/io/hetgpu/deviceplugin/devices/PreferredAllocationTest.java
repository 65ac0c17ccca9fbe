package io.hetgpu.deviceplugin.devices;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuDevice;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class PreferredAllocationTest {

    private final List<String> u = Fixtures.dgx1V100().devices().stream().map(GpuDevice::uuid).toList();
    private final PreferredAllocation preferred = new PreferredAllocation(Fixtures.dgx1V100());

    @Test
    void anOddRequestLeavesTheDoubleNvlinkPairWhole() {
        // Free: 0, 3, 4. 0-3 and 0-4 are NV2, 3-4 is SYS. One GPU must not be 0: that would strand 3 and 4.
        assertThat(preferred.choose(List.of(u.get(0), u.get(3), u.get(4)), List.of(), 1)).containsExactly(u.get(3));
    }

    @Test
    void fourGpusComeFromOneFullyLinkedQuad() {
        assertThat(preferred.choose(u, List.of(), 4)).containsExactlyInAnyOrder(u.get(0), u.get(1), u.get(2), u.get(3));
        assertThat(preferred.choose(u, List.of(u.get(6)), 4)).containsExactlyInAnyOrder(u.get(4), u.get(5), u.get(6), u.get(7));
    }

    @Test
    void answersInKubeletsOwnOrderWhenNoSetCanBeChosen() {
        assertThat(preferred.choose(List.of(u.get(5), "GPU-elsewhere"), List.of(), 2)).containsExactly(u.get(5), "GPU-elsewhere");
        assertThat(preferred.choose(List.of(u.get(1)), List.of(), 3)).containsExactly(u.get(1));
    }
}
