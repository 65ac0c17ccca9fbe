package io.hetgpu.deviceplugin.pods;

import io.hetgpu.deviceplugin.devices.PreferredAllocation;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.ProfileFormatException;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    private static final NodeTopology MIXED = mixedNode();
    private final List<String> mixedIds = MIXED.devices().stream().map(d -> d.uuid()).toList();

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
    void aPodWithoutAnAssignmentGetsTheBestSetAmongTheCardsItAccepts() {
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, mixedIds));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(MIXED));
        // Told only a count, the allocator keeps the NVLink pair whole and answers with a T4.
        assertThat(modelOf(degraded.prefer(mixedIds, List.of(), 1).getFirst())).isEqualTo("T4");

        var needsMemory = asks(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi");
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, needsMemory));
        var forBig = degraded.prefer(mixedIds, List.of(), 1);
        assertThat(modelOf(forBig.getFirst())).isEqualTo("A100");
        assertThat(degraded.allocate(forBig)).isInstanceOf(DeviceHandshake.Allocation.Unassigned.class);
        // Allocated: not waited for again; the next pod without requirements gets the allocator's choice.
        assertThat(waiting.requirementsFor(1)).isEqualTo(CardRequirements.ANY);

        // When no accepted card is available, kubelet's choice among the rest is left to the allocator.
        waiting.update(new BoundPod("ml", "small", "uid-small", NODE, Optional.empty(), List.of(1), false, asks(HetgpuKeys.POD_GPU_MODELS, "T4")));
        assertThat(degraded.prefer(mixedIds.subList(0, 2), List.of(), 1)).hasSize(1);
        assertThat(modelOf(degraded.prefer(mixedIds, List.of(), 1).getFirst())).isEqualTo("T4");
    }

    @Test
    void aPodThatNamesItsWeakestCardOrExcludesOneGetsOnlyCardsItAccepts() {
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, mixedIds));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(MIXED, CardCatalog.defaults()));
        // Unasked, the allocator keeps the NVLink pair of A100s whole and gives a T4.
        assertThat(modelOf(degraded.prefer(mixedIds, List.of(), 1).getFirst())).isEqualTo("T4");

        waiting.update(new BoundPod("ml", "a100-or-newer", "uid-a", NODE, Optional.empty(), List.of(1), false,
                asks(HetgpuKeys.POD_GPU_MIN_MODEL, "A100")));
        var forA = degraded.prefer(mixedIds, List.of(), 1);
        assertThat(modelOf(forA.getFirst())).isEqualTo("A100");
        degraded.allocate(forA);

        // V100 or newer still refuses the T4 (tier 30 < 40), though a T4's compute capability 7.5 is above a V100's 7.0.
        waiting.update(new BoundPod("ml", "v100-or-newer", "uid-v", NODE, Optional.empty(), List.of(1), false,
                asks(HetgpuKeys.POD_GPU_MIN_MODEL, "V100")));
        var forV = degraded.prefer(mixedIds, List.of(), 1);
        assertThat(modelOf(forV.getFirst())).isEqualTo("A100");
        degraded.allocate(forV);

        waiting.update(new BoundPod("ml", "no-t4", "uid-x", NODE, Optional.empty(), List.of(2), false,
                asks(HetgpuKeys.POD_GPU_EXCLUDE_MODELS, "T4")));
        assertThat(degraded.prefer(mixedIds, List.of(), 2)).extracting(DeviceHandshakeTest::modelOf).containsOnly("A100");
    }

    @Test
    void inTheDegradedModeAPodKubeletAdmitsBeforeTheWatchShowsItIsWaitedForAndGetsTheCardsItAccepts() throws Exception {
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, mixedIds));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(MIXED), Duration.ofMinutes(1));
        var asked = new CountDownLatch(1);
        var answer = new CompletableFuture<List<String>>();
        var kubelet = new Thread(() -> {
            asked.countDown();
            answer.complete(degraded.prefer(mixedIds, List.of(), 1));
        });
        kubelet.start();
        asked.await();
        // kubelet saw the binding first; the plugin's watch shows the pod a moment later.
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, asks(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi")));
        assertThat(modelOf(answer.get(30, TimeUnit.SECONDS).getFirst())).isEqualTo("A100");
    }

    @Test
    void inTheDegradedModeAdmittingAPodThatAsksNothingLeavesTheNextPodsRequirements() {
        var waiting = PendingAssignmentsTest.listed(new PendingAssignments(NODE, mixedIds));
        var degraded = new DeviceHandshake(waiting, new PreferredAllocation(MIXED));
        var needsMemory = asks(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi");
        waiting.update(new BoundPod("ml", "plain", "uid-plain", NODE, Optional.empty(), List.of(1), false));
        waiting.update(new BoundPod("ml", "big", "uid-big", NODE, Optional.empty(), List.of(1), false, needsMemory));

        // The pod seen first asks nothing: it gets the allocator's choice, a T4, and the next one is still known to need 32 GiB.
        var forPlain = degraded.prefer(mixedIds, List.of(), 1);
        assertThat(modelOf(forPlain.getFirst())).isEqualTo("T4");
        degraded.allocate(forPlain);
        assertThat(waiting.requirementsFor(1)).isEqualTo(needsMemory);
    }

    /** A node with two kinds of card: 2 A100 40 GB (NVLink-joined), 2 T4 15 GB. */
    private static NodeTopology mixedNode() {
        try {
            return ProfileLoader.load("mixed").topology(NODE);
        } catch (ProfileFormatException e) {
            throw new IllegalStateException("the shipped mixed profile is unreadable", e);
        }
    }

    private static String modelOf(String id) {
        return MIXED.device(MIXED.positionOf(id).orElseThrow()).model();
    }

    /** What a pod with one card annotation asks of its cards. */
    private static CardRequirements asks(String annotation, String value) {
        return CardRequirements.read(Map.of(annotation, value), CardCatalog.defaults(), new ArrayList<>());
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
