package io.hetgpu.deviceplugin.node;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.tier.CardCatalog;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class NodeInventoryTest {

    private final NodeInventory plan = new NodeInventory(CardCatalog.defaults(), Duration.ofSeconds(60));
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();
    private final Instant now = Instant.parse("2026-11-21T17:20:00Z");
    private final NodeMetadata bare = new NodeMetadata(Map.of(), Map.of());

    @Test
    void freeDevicesAreTheGpusNoPodHolds() throws Exception {
        var dgx1 = Fixtures.dgx1V100();
        var held = Set.of(dgx1.device(0).uuid(), dgx1.device(4).uuid(), "GPU-of-another-plugin");

        var desired = plan.desired(dgx1, Optional.of(held), now, bare);

        var free = freeCodec.decode(desired.annotations().get("hetgpu.io/gpu-free"));
        assertThat(free.uuids()).hasSize(6).doesNotContain(dgx1.device(0).uuid(), dgx1.device(4).uuid());
        assertThat(free.readAt()).isEqualTo(now);
        assertThat(new InventoryCodec().decode(desired.annotations().get("hetgpu.io/gpu-inventory"))).isEqualTo(dgx1);
        assertThat(desired.labels()).containsEntry("hetgpu.io/gpu.count", "8");
    }

    @Test
    void anUnchangedFreeSetKeepsItsTimeUntilItIsDueForRefresh() throws Exception {
        var dgx1 = Fixtures.dgx1V100();
        var first = plan.desired(dgx1, Optional.of(Set.of()), now, bare);

        var soon = plan.desired(dgx1, Optional.of(Set.of()), now.plusSeconds(30), first);
        var late = plan.desired(dgx1, Optional.of(Set.of()), now.plusSeconds(61), first);
        var changed = plan.desired(dgx1, Optional.of(Set.of(dgx1.device(1).uuid())), now.plusSeconds(5), first);

        assertThat(NodePatch.between(first, soon, NodeLabels.OWNED).isEmpty()).isTrue();
        assertThat(freeCodec.decode(late.annotations().get("hetgpu.io/gpu-free")).readAt()).isEqualTo(now.plusSeconds(61));
        assertThat(freeCodec.decode(changed.annotations().get("hetgpu.io/gpu-free")).uuids()).hasSize(7);
    }

    @Test
    void withoutPodResourcesThePublishedFreeSetIsLeftAlone() {
        var desired = plan.desired(Fixtures.dgx1V100(), Optional.empty(), now, bare);
        assertThat(desired.annotations()).containsOnlyKeys("hetgpu.io/gpu-inventory");
    }
}
