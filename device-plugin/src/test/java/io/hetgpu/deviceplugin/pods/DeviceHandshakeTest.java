package io.hetgpu.deviceplugin.pods;

import io.hetgpu.deviceplugin.devices.PreferredAllocation;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static io.hetgpu.deviceplugin.pods.PendingAssignmentsTest.NODE;
import static io.hetgpu.deviceplugin.pods.PendingAssignmentsTest.T0;
import static org.assertj.core.api.Assertions.assertThat;

/** GetPreferredAllocation and Allocate with the assignment, and without one. */
class DeviceHandshakeTest {

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final List<String> all = dgx1.devices().stream().map(d -> d.uuid()).toList();
    private final PendingAssignments pending = PendingAssignmentsTest.listed(new PendingAssignments(NODE, all));
    private final PreferredAllocation allocator = new PreferredAllocation(dgx1);
    private final DeviceHandshake handshake = new DeviceHandshake(pending, allocator);

    @Test
    void thePreferenceIsTheAssignmentInItsOrderWhenKubeletCanGiveIt() {
        assign("train", 0, 7, 2);

        assertThat(handshake.prefer(all, List.of(), 2)).containsExactly(uuid(7), uuid(2));
        assertThat(handshake.prefer(all, List.of(uuid(2)), 2)).containsExactly(uuid(7), uuid(2));
    }

    @Test
    void withoutAnAssignmentOfThatSizeThePreferenceIsTheAllocatorsChoice() {
        assign("train", 0, 7, 2);

        assertThat(handshake.prefer(all, List.of(), 4)).isEqualTo(allocator.choose(all, List.of(), 4));
        assertThat(handshake.assignedFor(all, List.of(), 4)).isEmpty();
    }

    @Test
    void assignedDevicesKubeletDoesNotOfferOrThatLackAMustIncludeAreNotPreferred() {
        assign("train", 0, 7, 2);
        var without7 = all.stream().filter(id -> !id.equals(uuid(7))).toList();

        assertThat(handshake.prefer(without7, List.of(), 2)).isEqualTo(allocator.choose(without7, List.of(), 2)).doesNotContain(uuid(7));
        assertThat(handshake.prefer(all, List.of(uuid(0)), 2)).isEqualTo(allocator.choose(all, List.of(uuid(0)), 2));
        // Preferring does not use the assignment up: kubelet's Allocate is still matched against it.
        assertThat(pending.match(2)).isPresent();
    }

    @Test
    void allocatingTheAssignedDevicesServesThemInTheAssignmentsOrder() {
        assign("train", 0, 7, 2);

        var served = handshake.allocate(List.of(uuid(2), uuid(7)));

        assertThat(served).isInstanceOf(DeviceHandshake.Allocation.Followed.class);
        assertThat(served.devices()).containsExactly(uuid(7), uuid(2));
        assertThat(pending.pending()).isEmpty();
    }

    @Test
    void allocatingOtherDevicesServesKubeletsAndNamesThePodAndItsAssignment() {
        assign("train", 0, 7, 2);

        var served = handshake.allocate(List.of(uuid(0), uuid(1)));

        assertThat(served).isInstanceOfSatisfying(DeviceHandshake.Allocation.Mismatch.class, mismatch -> {
            assertThat(mismatch.pod().name()).isEqualTo("train");
            assertThat(mismatch.assigned()).containsExactly(uuid(7), uuid(2));
        });
        assertThat(served.devices()).containsExactly(uuid(0), uuid(1));
        assertThat(pending.pending()).as("matched once, even when kubelet chose otherwise").isEmpty();
    }

    @Test
    void allocatingForNoPendingAssignmentServesKubeletsDevices() {
        assign("train", 0, 7, 2);

        var served = handshake.allocate(List.of(uuid(3)));

        assertThat(served).isInstanceOf(DeviceHandshake.Allocation.Unassigned.class);
        assertThat(served.devices()).containsExactly(uuid(3));
        assertThat(pending.match(2)).isPresent();
    }

    @Test
    void aPodWithoutAnAssignmentGetsTheBestSetAmongTheCardsItAccepts() throws Exception {
        // The degraded mode on a node with two kinds of card: 2 A100 40 GB (NVLink-joined), 2 T4 15 GB.
        var mixed = io.hetgpu.gpu.profile.ProfileLoader.load("mixed").topology(NODE);
        var ids = mixed.devices().stream().map(d -> d.uuid()).toList();
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, ids));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(mixed));
        java.util.function.Function<String, String> model = id -> mixed.device(mixed.positionOf(id).orElseThrow()).model();
        // Told only a count, the allocator keeps the NVLink pair whole and answers with a T4.
        assertThat(model.apply(degraded.prefer(ids, List.of(), 1).getFirst())).isEqualTo("T4");

        var catalog = io.hetgpu.gpu.tier.CardCatalog.defaults();
        var needsMemory = io.hetgpu.gpu.tier.CardRequirements.read(
                java.util.Map.of(io.hetgpu.gpu.inventory.HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"), catalog, new java.util.ArrayList<>());
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, needsMemory));
        var forBig = degraded.prefer(ids, List.of(), 1);
        assertThat(model.apply(forBig.getFirst())).isEqualTo("A100");
        assertThat(degraded.allocate(forBig)).isInstanceOf(DeviceHandshake.Allocation.Unassigned.class);
        // Allocated: not waited for again; the next pod without requirements gets the allocator's choice.
        assertThat(waiting.requirementsFor(1)).isEmpty();

        // When no accepted card is available, kubelet's choice among the rest is left to the allocator.
        var t4Only = io.hetgpu.gpu.tier.CardRequirements.read(
                java.util.Map.of(io.hetgpu.gpu.inventory.HetgpuKeys.POD_GPU_MODELS, "T4"), catalog, new java.util.ArrayList<>());
        waiting.update(new BoundPod("ml", "small", "uid-small", NODE, Optional.empty(), List.of(1), false, t4Only));
        assertThat(degraded.prefer(ids.subList(0, 2), List.of(), 1)).hasSize(1);
        assertThat(model.apply(degraded.prefer(ids, List.of(), 1).getFirst())).isEqualTo("T4");
    }

    @Test
    void inTheDegradedModeAPodKubeletAdmitsBeforeTheWatchShowsItIsWaitedForAndGetsTheCardsItAccepts() throws Exception {
        var mixed = io.hetgpu.gpu.profile.ProfileLoader.load("mixed").topology(NODE);
        var ids = mixed.devices().stream().map(d -> d.uuid()).toList();
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, ids));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(mixed), java.time.Duration.ofMinutes(1));
        var needsMemory = io.hetgpu.gpu.tier.CardRequirements.read(
                java.util.Map.of(io.hetgpu.gpu.inventory.HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"),
                io.hetgpu.gpu.tier.CardCatalog.defaults(), new java.util.ArrayList<>());
        var asked = new java.util.concurrent.CountDownLatch(1);
        var answer = new java.util.concurrent.CompletableFuture<List<String>>();
        var kubelet = new Thread(() -> {
            asked.countDown();
            answer.complete(degraded.prefer(ids, List.of(), 1));
        });
        kubelet.start();
        asked.await();
        // kubelet saw the binding first; the plugin's watch shows the pod a moment later.
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, needsMemory));
        var chosen = answer.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(mixed.device(mixed.positionOf(chosen.getFirst()).orElseThrow()).model()).isEqualTo("A100");
    }

    @Test
    void inTheDegradedModeAdmittingAPodThatAsksNothingLeavesTheNextPodsRequirements() throws Exception {
        var mixed = io.hetgpu.gpu.profile.ProfileLoader.load("mixed").topology(NODE);
        var ids = mixed.devices().stream().map(d -> d.uuid()).toList();
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, ids));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(mixed));
        var needsMemory = io.hetgpu.gpu.tier.CardRequirements.read(
                java.util.Map.of(io.hetgpu.gpu.inventory.HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"),
                io.hetgpu.gpu.tier.CardCatalog.defaults(), new java.util.ArrayList<>());
        waiting.update(new BoundPod("ml", "plain", "uid-plain", NODE, Optional.empty(), List.of(1), false));
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, needsMemory));

        // The pod seen first asks nothing: it gets the allocator's choice, a T4, and the next one is still known to need 32 GiB.
        var forPlain = degraded.prefer(ids, List.of(), 1);
        assertThat(mixed.device(mixed.positionOf(forPlain.getFirst()).orElseThrow()).model()).isEqualTo("T4");
        degraded.allocate(forPlain);
        assertThat(waiting.requirementsFor(1)).contains(needsMemory);
    }

    private void assign(String name, int second, Integer... positions) {
        var devices = List.of(positions).stream().map(this::uuid).toList();
        pending.update(new BoundPod("ml", name, "uid-" + name, NODE,
                Optional.of(new DeviceAssignmentCodec().encode(new DeviceAssignment(NODE, devices, T0.plusSeconds(second)))),
                List.of(devices.size()), false));
    }

    private String uuid(int position) {
        return dgx1.devices().get(position).uuid();
    }
}
