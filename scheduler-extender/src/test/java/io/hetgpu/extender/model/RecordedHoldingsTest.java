package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.BoundPods;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Pods the bind verb bound hold the devices recorded on them; only the others' are predicted. */
class RecordedHoldingsTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private final NodeStateFactory factory = new NodeStateFactory(CATALOG, "rack");
    private final io.hetgpu.gpu.NodeTopology dgx = TestTopologies.dgxA100("dgx-1");

    private NodeFacts allFree() {
        return new NodeFacts("dgx-1", "1", Map.of(), TestTopologies.inventory(dgx), TestTopologies.allFree(dgx));
    }

    private BoundPod recorded(String uid, java.time.Instant boundAt, int... positions) {
        var devices = java.util.Arrays.stream(positions).mapToObj(p -> dgx.device(p).uuid()).toList();
        return new BoundPod(uid, positions.length, false, boundAt, devices);
    }

    @Test
    void recordedDevicesAreNotFreeEvenWhenTheFreeListWasReadAfterTheBinding() {
        // Bound before the list was read, kubelet has not admitted it yet: the list still shows its GPUs free.
        var pod = recorded("a", TestTopologies.READ_AT.minusSeconds(30), 5, 6);

        var state = factory.state(allFree(), List.of(pod));

        assertThat(state.freeMask()).isEqualTo(0xFFL & ~(1L << 5 | 1L << 6));
    }

    @Test
    void theOthersArePredictedOnTheDevicesTheRecordsLeave() {
        var later = TestTopologies.READ_AT.plusSeconds(5);
        var pods = List.of(recorded("a", later, 0, 1, 2), new BoundPod("b", 4, false, later.plusSeconds(1)));

        var state = factory.state(allFree(), pods);
        var holdings = DeviceHoldings.predict(state.gpus(), pods);

        assertThat(holdings.get("a")).isEqualTo(0b111L);
        assertThat(holdings.get("b") & 0b111L).as("predicted on what the record leaves").isZero();
        assertThat(Long.bitCount(holdings.get("b"))).isEqualTo(4);
        assertThat(state.freeMask()).isEqualTo(0xFFL & ~holdings.get("a") & ~holdings.get("b"));
    }

    @Test
    void aRecordIsTakenAsWrittenNotAsTheAllocatorWouldChoose() {
        var gpus = factory.state(allFree(), List.of()).gpus();
        var holdings = DeviceHoldings.predict(gpus, List.of(recorded("a", TestTopologies.READ_AT, 7, 3)));
        assertThat(holdings.get("a")).isEqualTo(1L << 7 | 1L << 3);
    }

    @Test
    void aRecordNamingADeviceTheNodeDoesNotHaveIsPredictedInstead() {
        var gpus = factory.state(allFree(), List.of()).gpus();
        var stale = new BoundPod("a", 2, false, TestTopologies.READ_AT, List.of(dgx.device(0).uuid(), "GPU-of-another-node"));
        assertThat(Long.bitCount(DeviceHoldings.predict(gpus, List.of(stale)).get("a"))).isEqualTo(2);
    }

    @Test
    void aNodeWhoseRecordedDevicesTheFreeListLeavesOutKeepsItsSharedState() {
        var listed = new NodeFacts("dgx-1", "2", Map.of(), TestTopologies.inventory(dgx), TestTopologies.free(dgx, 2, 3, 4, 5, 6, 7));
        var base = factory.state(listed, List.of());
        assertThat(factory.state(listed, List.of(recorded("a", TestTopologies.READ_AT.minusSeconds(30), 0, 1)))).isSameAs(base);
    }

    @Test
    void theRecordIsReadFromThePodOnlyForTheNodeItIsBoundTo() {
        var record = io.hetgpu.extender.TestTrust.signed(new DeviceAssignment("dgx-1", List.of("GPU-a", "GPU-b"), TestTopologies.READ_AT), "u");
        var parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
        var trust = io.hetgpu.extender.TestTrust.trust();

        assertThat(BoundPods.of(pod("dgx-1", record), parser, trust).devices()).containsExactly("GPU-a", "GPU-b");
        assertThat(BoundPods.of(pod("dgx-2", record), parser, trust).devices()).as("a stale record for another node").isEmpty();
        assertThat(BoundPods.of(pod("dgx-1", "{not json"), parser, trust).devices()).isEmpty();
        var unsigned = new DeviceAssignmentCodec().encode(new DeviceAssignment("dgx-1", List.of("GPU-a", "GPU-b"), TestTopologies.READ_AT));
        assertThat(BoundPods.of(pod("dgx-1", unsigned), parser, trust).devices()).as("a record the pod's author wrote").isEmpty();
        assertThat(BoundPods.of(pod("dgx-1", unsigned), parser, trust).gpuCount()).as("its GPUs, predicted from its request").isEqualTo(2);
    }

    private static io.fabric8.kubernetes.api.model.Pod pod(String node, String record) {
        return new PodBuilder().withNewMetadata().withName("p").withNamespace("default").withUid("u")
                .withAnnotations(Map.of(HetgpuKeys.POD_GPU_DEVICES, record)).endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("main").withNewResources()
                .addToLimits("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2")).endResources().endContainer().endSpec().build();
    }
}
