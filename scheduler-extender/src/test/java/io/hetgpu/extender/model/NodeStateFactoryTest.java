package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestTopologies;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.inventory.FreeDevices;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class NodeStateFactoryTest {

    private final NodeStateFactory factory = new NodeStateFactory(CardCatalog.defaults(), "topology.hetgpu.io/rack");

    @Test
    void aNodeWithoutInventoryIsCpuOnly() {
        var state = factory.state(new NodeFacts("cpu-1", "1", Map.of(), null, null), List.of());
        assertThat(state.isGpuNode()).isFalse();
        assertThat(state.freeCount()).isZero();
    }

    @Test
    void readsRackZoneDevicesTiersAndFreeList() {
        var topology = TestTopologies.dgx1V100("gpu-1");
        var facts = new NodeFacts("gpu-1", "7", Map.of("topology.hetgpu.io/rack", "r1", "topology.kubernetes.io/zone", "z1"),
                TestTopologies.inventory(topology), TestTopologies.free(topology, 0, 1, 2, 3));
        var state = factory.state(facts, List.of());

        assertThat(state.rack()).isEqualTo("r1");
        assertThat(state.zone()).isEqualTo("z1");
        assertThat(state.gpus().size()).isEqualTo(8);
        assertThat(state.gpus().tiers().getFirst().model()).isEqualTo("V100");
        assertThat(DeviceMask.positions(state.freeMask())).containsExactly(0, 1, 2, 3);
    }

    @Test
    void unhealthyDevicesAreNeverFree() {
        var topology = TestTopologies.t4x4("t4-1");
        var sick = topology.withHealth(Map.of(topology.device(1).uuid(), DeviceHealth.UNHEALTHY));
        var state = factory.state(new NodeFacts("t4-1", "1", Map.of(), TestTopologies.inventory(sick), TestTopologies.allFree(sick)), List.of());
        assertThat(DeviceMask.positions(state.freeMask())).containsExactly(0, 2, 3);
    }

    @Test
    void devicesPromisedToPodsBoundAfterTheFreeListWasReadAreTaken() {
        var topology = TestTopologies.dgx1V100("gpu-1");
        var facts = new NodeFacts("gpu-1", "1", Map.of(), TestTopologies.inventory(topology), TestTopologies.allFree(topology));
        var before = new BoundPod("old", 4, false, TestTopologies.READ_AT.minusSeconds(60));
        var after = new BoundPod("new", 2, true, TestTopologies.READ_AT.plusSeconds(5));

        var state = factory.state(facts, List.of(before, after));

        // The pod bound before the read is already reflected in the free list; the later one takes an NVLink pair.
        assertThat(state.freeCount()).isEqualTo(6);
    }

    @Test
    void aBindStampedToTheSecondOfTheReadCountsAsPromisedBecauseItMayHaveComeLater() {
        var topology = TestTopologies.dgx1V100("gpu-1");
        var readAt = Instant.parse("2026-11-21T12:00:00.500Z");
        var facts = new NodeFacts("gpu-1", "1", Map.of(), TestTopologies.inventory(topology), new FreeDevicesCodec().encode(new FreeDevices(
                topology.devices().stream().map(GpuDevice::uuid).collect(Collectors.toSet()), readAt)));
        // The API server writes PodScheduled as 12:00:00 for a bind at 12:00:00.7, after the read.
        var sameSecond = new BoundPod("same-second", 2, false, Instant.parse("2026-11-21T12:00:00Z"));
        var secondBefore = new BoundPod("second-before", 2, false, Instant.parse("2026-11-21T11:59:59Z"));
        var exactlyEarlier = new BoundPod("stamped-finely", 2, false, Instant.parse("2026-11-21T12:00:00.400Z"));

        assertThat(factory.state(facts, List.of(sameSecond)).freeCount()).isEqualTo(6);
        assertThat(factory.state(facts, List.of(secondBefore, exactlyEarlier)).freeCount()).isEqualTo(8);
    }

    @Test
    void withoutAFreeListEveryBoundPodIsSubtracted() {
        var topology = TestTopologies.dgxA100("a100-1");
        var facts = new NodeFacts("a100-1", "1", Map.of(), TestTopologies.inventory(topology), null);
        var state = factory.state(facts, List.of(new BoundPod("a", 3, false, Instant.EPOCH)));
        assertThat(state.freeCount()).isEqualTo(5);
    }

    @Test
    void anUnreadableInventoryMakesAGpuNodeWithNoGpusAndSaysWhy() {
        var state = factory.state(new NodeFacts("bad", "1", Map.of(), "{\"schema\":1,\"devices\":\"many\"}", null), List.of());
        assertThat(state.isGpuNode()).isTrue();
        assertThat(state.freeCount()).isZero();
        assertThat(state.gpus().problem()).startsWith("hetgpu.io/gpu-inventory unreadable: ").contains("devices");
    }

    @Test
    void decodesAnInventoryOncePerResourceVersion() {
        var topology = TestTopologies.t4x4("t4-1");
        var inventory = TestTopologies.inventory(topology);
        var first = factory.state(new NodeFacts("t4-1", "5", Map.of(), inventory, null), List.of());
        var again = factory.state(new NodeFacts("t4-1", "5", Map.of(), inventory, null), List.of());
        var changed = factory.state(new NodeFacts("t4-1", "6", Map.of(), TestTopologies.inventory(
                topology.withHealth(Map.of(topology.device(0).uuid(), DeviceHealth.UNHEALTHY))), null), List.of());

        assertThat(again.gpus()).isSameAs(first.gpus());
        assertThat(changed.gpus()).isNotSameAs(first.gpus());
        assertThat(changed.freeCount()).isEqualTo(3);
    }

    @Test
    void anUnchangedNodeIsOneSharedStateUntilAPodIsBoundAfterItsFreeList() {
        var topology = TestTopologies.dgx1V100("gpu-1");
        var facts = new NodeFacts("gpu-1", "1", Map.of(), TestTopologies.inventory(topology), TestTopologies.allFree(topology));
        var first = factory.state(facts, List.of());
        var older = new BoundPod("old", 4, false, TestTopologies.READ_AT.minusSeconds(60));
        var newer = new BoundPod("new", 2, false, TestTopologies.READ_AT.plusSeconds(5));

        assertThat(factory.state(facts, List.of())).isSameAs(first);
        assertThat(factory.state(facts, List.of(older))).isSameAs(first);
        var promised = factory.state(facts, List.of(older, newer));
        assertThat(promised).isNotSameAs(first);
        assertThat(promised.freeCount()).isEqualTo(6);
    }
}
