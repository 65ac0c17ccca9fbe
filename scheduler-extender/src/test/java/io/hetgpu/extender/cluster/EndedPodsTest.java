package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeGpuReader;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which ended pods the learner hears of, and on which cards their run counts. */
class EndedPodsTest {

    private static final Set<String> OURS = Set.of("hetgpu-scheduler");
    private final NodeGpuReader reader = new NodeGpuReader(CardCatalog.defaults(), HetgpuKeys.DEFAULT_RESOURCE_NAME);

    @Test
    void aRunThatEndedIsAPodOfOurSchedulerBoundToANodeThatSucceededOrFailed() {
        assertThat(EndedPods.endedRun(pod("Succeeded", "hetgpu-scheduler", "dgx-1"), OURS)).isTrue();
        assertThat(EndedPods.endedRun(pod("Failed", "hetgpu-scheduler", "dgx-1"), OURS)).isTrue();
        assertThat(EndedPods.endedRun(pod("Running", "hetgpu-scheduler", "dgx-1"), OURS)).as("still running").isFalse();
        assertThat(EndedPods.endedRun(pod("Succeeded", "default-scheduler", "dgx-1"), OURS)).as("another scheduler's").isFalse();
        assertThat(EndedPods.endedRun(pod("Failed", "hetgpu-scheduler", null), OURS)).as("never placed").isFalse();
        assertThat(EndedPods.endedRun(new PodBuilder().withNewMetadata().withName("no-uid").endMetadata().build(), OURS)).isFalse();
    }

    @Test
    void onANodeOfOneModelTheRunCountsOnItsCards() {
        var dgx = TestTopologies.dgx1V100("dgx-1");
        assertThat(EndedPods.cardsOf(pod("Succeeded", "hetgpu-scheduler", "dgx-1"), 2, node("dgx-1", dgx), reader, TestTrust.trust()))
                .isEqualTo(new EndedPods.Cards.Model("V100"));
    }

    @Test
    void onAMixedNodeOnlyATrustedRecordSaysWhichCardsThePodHeld() {
        var mixed = mixed("mix-1");
        var node = node("mix-1", mixed);
        var t4 = List.of(mixed.device(0).uuid(), mixed.device(1).uuid());
        var record = new DeviceAssignment("mix-1", t4, Instant.now().minusSeconds(3600));

        var signed = withRecord(pod("Succeeded", "hetgpu-scheduler", "mix-1"), TestTrust.signed(record, "uid-1"));
        assertThat(EndedPods.cardsOf(signed, 2, node, reader, TestTrust.trust())).isEqualTo(new EndedPods.Cards.Model("T4"));

        // Written by the pod's author, claiming V100s: not trusted, and the node alone cannot tell.
        var forged = withRecord(pod("Succeeded", "hetgpu-scheduler", "mix-1"), new io.hetgpu.gpu.inventory.DeviceAssignmentCodec()
                .encode(new DeviceAssignment("mix-1", List.of(mixed.device(2).uuid(), mixed.device(3).uuid()), Instant.now())));
        assertThat(EndedPods.cardsOf(forged, 2, node, reader, TestTrust.trust()))
                .isInstanceOfSatisfying(EndedPods.Cards.Unknown.class, unknown -> assertThat(unknown.reason())
                        .isEqualTo("node \"mix-1\" has cards of several models [T4, V100] and the pod has no trusted record of which it held"));
    }

    @Test
    void aNodeGoneOrOfUnknownModelTellsNoCard() {
        var pod = pod("Succeeded", "hetgpu-scheduler", "gone");
        assertThat(EndedPods.cardsOf(pod, 1, null, reader, TestTrust.trust()))
                .isEqualTo(new EndedPods.Cards.Unknown("node \"gone\" no longer known"));
        var countOnly = NodeFacts.of(new NodeBuilder().withNewMetadata().withName("plain").endMetadata().withNewStatus()
                .addToAllocatable(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("4")).endStatus().build());
        assertThat(EndedPods.cardsOf(pod("Succeeded", "hetgpu-scheduler", "plain"), 1, countOnly, reader, TestTrust.trust()))
                .isEqualTo(new EndedPods.Cards.Unknown("node \"plain\": the model of its GPUs is unknown"));
    }

    /** Two T4s and two V100s on one board. */
    private static NodeTopology mixed(String name) {
        var devices = new ArrayList<>(TestTopologies.t4x4(name).devices().subList(0, 2));
        devices.addAll(TestTopologies.v100Pcie(name, 4).devices().subList(2, 4));
        return new NodeTopology("535.104.05", "12.2", devices, LinkMatrix.builder(4, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS)).build());
    }

    private static NodeFacts node(String name, NodeTopology topology) {
        return new NodeFacts(name, "1", Map.of(), TestTopologies.inventory(topology), TestTopologies.allFree(topology));
    }

    private static Pod withRecord(Pod pod, String record) {
        return new PodBuilder(pod).editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, record).endMetadata().build();
    }

    static Pod pod(String phase, String scheduler, String node) {
        return new PodBuilder().withNewMetadata().withName("train").withNamespace("ml").withUid("uid-1").endMetadata()
                .withNewSpec().withSchedulerName(scheduler).withNodeName(node).addNewContainer().withName("main").withNewResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("2")).endResources().endContainer().endSpec()
                .withNewStatus().withPhase(phase).endStatus().build();
    }
}
