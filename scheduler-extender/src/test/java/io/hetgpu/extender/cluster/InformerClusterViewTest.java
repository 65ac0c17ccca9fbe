package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.WaitingPeer;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class InformerClusterViewTest {

    private static final String RACK = "topology.hetgpu.io/rack";

    KubernetesClient client;

    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults());
    private InformerClusterView view;

    @BeforeEach
    void createCluster() {
        var dgx = TestTopologies.dgx1V100("dgx-1");
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("dgx-1")
                .withLabels(Map.of(RACK, "r1", "topology.kubernetes.io/zone", "z1"))
                .withAnnotations(Map.of("hetgpu.io/gpu-inventory", TestTopologies.inventory(dgx),
                        "hetgpu.io/gpu-free", TestTopologies.allFree(dgx)))
                .endMetadata().build()).create();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1")
                .withLabels(Map.of(RACK, "r2", "topology.kubernetes.io/zone", "z1")).endMetadata().build()).create();
        view = new InformerClusterView(client, parser, RACK, io.hetgpu.extender.TestTrust.trust());
    }

    @AfterEach
    void close() {
        view.close();
    }

    @Test
    void isNotReadyUntilTheInformersHaveSynced() {
        assertThat(view.synced()).isFalse();
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(view::synced);
        assertThat(view.node("dgx-1").labels()).containsEntry(RACK, "r1");
        assertThat(view.node("nope")).isNull();
    }

    @Test
    void tracksGpuPodsBoundToEachNode() {
        view.start().join();
        client.pods().inNamespace("ml").resource(pod("w0", "dgx-1", 2, "job-a")).create();
        client.pods().inNamespace("ml").resource(pod("cpu-task", "dgx-1", 0, "")).create();

        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 1);
        assertThat(view.boundPods("dgx-1").getFirst().gpuCount()).isEqualTo(2);

        // A deleted pod is kept, released, until the device plugin's free list can have caught up (BoundPod.releasedAt).
        client.pods().inNamespace("ml").withName("w0").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").stream().allMatch(BoundPod::released));
        assertThat(view.boundPods("dgx-1")).singleElement().satisfies(pod -> assertThat(pod.gpuCount()).isEqualTo(2));
    }

    @Test
    void findsJobPeersAndWhereTheDataLives() throws Exception {
        client.pods().inNamespace("ml").resource(pod("ps-0", "cpu-1", 0, "job-a")).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName("pv-imagenet").endMetadata()
                .withNewSpec().addToCapacity("storage", new Quantity("1Ti")).withNewNodeAffinity().withNewRequired()
                .addNewNodeSelectorTerm().addNewMatchExpression().withKey("kubernetes.io/hostname").withOperator("In")
                .withValues("dgx-1").endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity().endSpec().build()).create();
        client.persistentVolumeClaims().inNamespace("ml").resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                .withName("imagenet").endMetadata().withNewSpec().withVolumeName("pv-imagenet").endSpec().build()).create();
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(view::synced);

        var worker = parser.parse(withClaim(pod("w1", null, 1, "job-a"), "imagenet"));
        var context = view.contextOf(worker);

        assertThat(context.peers()).hasSize(1);
        assertThat(context.peers().getFirst().node()).isEqualTo("cpu-1");
        assertThat(context.peers().getFirst().rack()).isEqualTo("r2");
        assertThat(context.volumes()).hasSize(1);
        assertThat(context.volumes().getFirst().nodes()).isEqualTo(Set.of("dgx-1"));
    }

    @Test
    void findsThePeersOfAJobNamedByAnyConventionTheReaderKnows() throws Exception {
        // A JobSet's pods (as the JobSet controller labels them) and a Volcano-grouped pod: no hetgpu.io/job anywhere.
        var leader = pod("train-leader-0-0", "cpu-1", 0, "");
        leader.getMetadata().setLabels(Map.of("jobset.sigs.k8s.io/jobset-name", "train", "jobset.sigs.k8s.io/replicatedjob-name", "leader"));
        client.pods().inNamespace("ml").resource(leader).create();
        var other = pod("other-0", "dgx-1", 1, "");
        other.getMetadata().setAnnotations(Map.of("scheduling.k8s.io/group-name", "other"));
        client.pods().inNamespace("ml").resource(other).create();
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(view::synced);

        var worker = pending(pod("train-workers-0-0", null, 4, ""));
        worker.getMetadata().setLabels(Map.of("jobset.sigs.k8s.io/jobset-name", "train", "jobset.sigs.k8s.io/replicatedjob-name", "workers"));
        var request = parser.parse(worker);

        assertThat(request.job()).isEqualTo("train");
        assertThat(request.role()).isEqualTo("workers");
        assertThat(view.contextOf(request).peers()).extracting(PeerLocation::podName).containsExactly("train-leader-0-0");
    }

    @Test
    void listsTheJobsPodsStillWaitingForANode() throws Exception {
        client.pods().inNamespace("ml").resource(pod("ps-0", "cpu-1", 0, "job-a")).create();
        client.pods().inNamespace("ml").resource(pending(pod("w2", null, 4, "job-a"))).create();
        client.pods().inNamespace("ml").resource(pending(pod("w0", null, 2, "job-a"))).create();
        var finished = pod("w9", null, 4, "job-a");
        finished.getStatus().setPhase("Failed");
        client.pods().inNamespace("ml").resource(finished).create();
        client.pods().inNamespace("ml").resource(pending(pod("x0", null, 8, "job-b"))).create();
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(view::synced);

        var context = view.contextOf(parser.parse(pending(pod("w1", null, 4, "job-a"))));

        assertThat(context.peers()).extracting(PeerLocation::podName).containsExactly("ps-0");
        // In creation order, then by name; the API server stamps creation times to the second, so either order can be right here.
        assertThat(context.waiting()).containsExactlyInAnyOrder(new WaitingPeer("w0", 2), new WaitingPeer("w2", 4));
    }

    @Test
    void answersNodeNamesRequestsFromTheInformerCache() throws Exception {
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(view::synced);
        var catalog = CardCatalog.defaults();
        var service = new ExtenderService(view, parser, new NodeStateFactory(catalog, RACK),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });

        var result = service.filter(new ExtenderArgs(pod("w2", null, 4, "job-b"), null, List.of("dgx-1", "cpu-1", "ghost")));

        assertThat(result.error()).isEmpty();
        assertThat(result.nodes()).isNull();
        assertThat(result.nodeNames()).containsExactly("dgx-1");
        assertThat(result.failedAndUnresolvableNodes()).containsOnlyKeys("cpu-1");
        assertThat(result.failedNodes()).containsOnlyKeys("ghost");
    }

    @Test
    void theNodeSnapshotFollowsNodesAndPodsAndForgetsDeletedNodes() {
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.nodes().size() == 2);
        var catalog = CardCatalog.defaults();
        var states = new NodeStateFactory(catalog, RACK);
        var service = new ExtenderService(view, parser, states,
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
        var args = new ExtenderArgs(pod("w3", null, 1, ""), null, List.of("dgx-1", "cpu-1"));
        assertThat(service.filter(args).nodeNames()).containsExactly("dgx-1");
        assertThat(states.cachedNodes()).isEqualTo(2);
        var before = view.nodes();

        client.nodes().withName("cpu-1").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.nodes().positionOf("cpu-1") < 0);
        var afterDelete = service.filter(args);

        assertThat(afterDelete.failedNodes()).containsOnlyKeys("cpu-1");
        assertThat(states.cachedNodes()).isEqualTo(1);
        assertThat(before.positionOf("cpu-1")).isNotNegative();

        // A pod bound to a node the view has not seen yet is on that node once it comes, whichever event comes first.
        client.pods().inNamespace("ml").resource(pod("w4", "dgx-2", 2, "")).create();
        var dgx2 = TestTopologies.dgx1V100("dgx-2");
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("dgx-2")
                .withAnnotations(Map.of("hetgpu.io/gpu-inventory", TestTopologies.inventory(dgx2),
                        "hetgpu.io/gpu-free", TestTopologies.allFree(dgx2)))
                .endMetadata().build()).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.nodes().boundPods("dgx-2").size() == 1);
        assertThat(view.boundPods("dgx-2").getFirst().gpuCount()).isEqualTo(2);

        client.pods().inNamespace("ml").withName("w4").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.nodes().boundPods("dgx-2").stream().allMatch(BoundPod::released));
    }

    @Test
    void aPodNotBoundYetWithARecordHoldsItsDevicesOnTheRecordsNodeUntilItIsBoundOrTheRecordGoes() {
        view.start().join();
        var dgx = TestTopologies.dgx1V100("dgx-1");
        var assignment = new io.hetgpu.gpu.inventory.DeviceAssignment(
                "dgx-1", List.of(dgx.device(2).uuid(), dgx.device(3).uuid()), java.time.Instant.parse("2026-01-01T00:00:00Z"));
        // Another extender's bind in flight: the record written (signed for the pod), the Binding not yet.
        client.pods().inNamespace("ml").resource(pending(pod("w0", null, 2, ""))).create();
        recordOn("w0", assignment);

        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 1);
        assertThat(view.boundPods("dgx-1").getFirst()).satisfies(pod -> {
            assertThat(pod.binding()).isTrue();
            assertThat(pod.devices()).containsExactly(dgx.device(2).uuid(), dgx.device(3).uuid());
            assertThat(pod.boundAt()).isEqualTo(java.time.Instant.parse("2026-01-01T00:00:00Z"));
        });

        // Bound: the same entry, now a bound pod holding its record.
        client.pods().inNamespace("ml").withName("w0").edit(pod -> new PodBuilder(pod).editSpec().withNodeName("dgx-1").endSpec().build());
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").stream().noneMatch(BoundPod::binding));
        assertThat(view.boundPods("dgx-1")).singleElement().satisfies(pod -> assertThat(pod.assigned()).isTrue());

        // A bind that failed and removed its record leaves nothing behind.
        client.pods().inNamespace("ml").resource(pending(pod("w1", null, 2, ""))).create();
        recordOn("w1", assignment);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 2);
        client.pods().inNamespace("ml").withName("w1").edit(pod -> new PodBuilder(pod).editMetadata().withAnnotations(Map.of()).endMetadata().build());
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 1);

        // And one deleted while its record is still on it too.
        client.pods().inNamespace("ml").resource(pending(pod("w2", null, 2, ""))).create();
        recordOn("w2", assignment);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 2);
        client.pods().inNamespace("ml").withName("w2").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods("dgx-1").size() == 1);
    }

    @Test
    void recordsSeenBeforeTheKeyIsReadAreJudgedByItOnceItIsAndTheViewIsNotSyncedUntilThen() {
        var dgx = TestTopologies.dgx1V100("dgx-1");
        client.pods().inNamespace("ml").resource(pending(pod("w0", null, 2, ""))).create();
        recordOn("w0", new io.hetgpu.gpu.inventory.DeviceAssignment("dgx-1", List.of(dgx.device(0).uuid(), dgx.device(1).uuid()),
                java.time.Instant.now()));
        var awaiting = io.hetgpu.extender.trust.RecordTrust.awaitingKey(java.util.Set.of("default-scheduler"));
        var keyless = new InformerClusterView(client, parser, RACK, awaiting);
        try {
            var synced = keyless.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> keyless.unsynced().orElse("").contains("not yet read from its Secret"));
            assertThat(keyless.synced()).isFalse();
            assertThat(keyless.boundPods("dgx-1")).as("no record counts without the key").isEmpty();

            keyless.useRecordKey(io.hetgpu.extender.TestTrust.KEY);

            synced.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join();
            assertThat(keyless.synced()).isTrue();
            assertThat(keyless.boundPods("dgx-1")).singleElement().satisfies(held -> assertThat(held.binding()).isTrue());
            assertThat(awaiting.refusals().count(io.hetgpu.extender.trust.Distrust.BAD_SIGNATURE)).as("nothing refused before the key").isZero();
        } finally {
            keyless.close();
        }
    }

    @Test
    void aListingOfTheSameObjectsGivesTheViewTheInformersGiveAndFollowsWhatItIsTold() throws Exception {
        var dgx = TestTopologies.dgx1V100("dgx-1");
        client.pods().inNamespace("ml").resource(pending(pod("w5", null, 2, ""))).create();
        recordOn("w5", new io.hetgpu.gpu.inventory.DeviceAssignment("dgx-1", List.of(dgx.device(6).uuid(), dgx.device(7).uuid()),
                java.time.Instant.now()));
        client.pods().inNamespace("ml").resource(pod("w0", "dgx-1", 2, "job-a")).create();
        client.pods().inNamespace("ml").resource(pod("ps-0", "cpu-1", 0, "job-a")).create();
        client.pods().inNamespace("ml").resource(pending(pod("w2", null, 4, "job-a"))).create();
        client.persistentVolumeClaims().inNamespace("ml").resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                .withName("imagenet").withAnnotations(Map.of("hetgpu.io/data-locality", "rack=r1")).endMetadata().build()).create();
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.synced() && view.boundPods("dgx-1").size() == 2);

        var listed = new ListedClusterView(client.nodes().list().getItems(), client.pods().inAnyNamespace().list().getItems(),
                client.persistentVolumes().list().getItems(), client.persistentVolumeClaims().inAnyNamespace().list().getItems(), parser, RACK,
                io.hetgpu.extender.TestTrust.trust());
        var worker = parser.parse(withClaim(pending(pod("w1", null, 4, "job-a")), "imagenet"));

        for (var node : List.of("dgx-1", "cpu-1")) {
            assertThat(listed.nodes().facts(node)).isEqualTo(view.nodes().facts(node));
            assertThat(listed.boundPods(node)).containsExactlyInAnyOrderElementsOf(view.boundPods(node));
        }
        assertThat(listed.contextOf(worker)).isEqualTo(view.contextOf(worker));
        assertThat(listed.jobPods("ml/job-a")).extracting(p -> p.getMetadata().getName()).containsExactlyInAnyOrder("w0", "ps-0", "w2");

        // Told that a pod is bound, then that one is gone: its GPUs are held, then free, at once.
        var uid = Map.of("w0", listed.pod("ml", "w0").getMetadata().getUid(), "w2", listed.pod("ml", "w2").getMetadata().getUid(),
                "w5", listed.pod("ml", "w5").getMetadata().getUid());
        listed.put(new PodBuilder(listed.pod("ml", "w2")).editSpec().withNodeName("dgx-1").endSpec().build());
        assertThat(listed.boundPods("dgx-1")).extracting(BoundPod::uid).containsExactlyInAnyOrder(uid.get("w0"), uid.get("w5"), uid.get("w2"));
        assertThat(listed.contextOf(worker).waiting()).isEmpty();
        listed.remove(listed.pod("ml", "w0"));
        assertThat(listed.boundPods("dgx-1")).extracting(BoundPod::uid).containsExactlyInAnyOrder(uid.get("w5"), uid.get("w2"));
    }

    @Test
    void twoReplicasOneStartedAfterThePodsCountTheSameWaitingWorkAndFollowItsBindsAndDeletions() {
        view.start().join();
        client.pods().inNamespace("ml").resource(pending(pod("one", null, 1, ""))).create();
        client.pods().inNamespace("ml").resource(pending(pod("two", null, 2, ""))).create();
        client.pods().inNamespace("ml").resource(pending(pod("member", null, 1, "job-a"))).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.waitingGpusBelow(8) == 3);

        // A second replica, or this one restarted: it learns the waiting pods from its first list.
        try (var restarted = new InformerClusterView(client, parser, RACK, io.hetgpu.extender.TestTrust.trust())) {
            restarted.start().join();
            await().atMost(Duration.ofSeconds(10)).until(() -> restarted.synced() && restarted.waitingGpusBelow(8) == 3);
            assertThat(restarted.waitingGpusBelow(2)).as("only the pods of fewer GPUs").isEqualTo(1);

            client.pods().inNamespace("ml").withName("one").edit(pod -> new PodBuilder(pod).editSpec().withNodeName("dgx-1").endSpec().build());
            client.pods().inNamespace("ml").withName("two").delete();
            for (var replica : List.of(view, restarted)) {
                await().atMost(Duration.ofSeconds(10)).until(() -> replica.waitingGpusBelow(8) == 0);
            }
        }
    }

    private static Pod pod(String name, String node, int gpus, String job) {
        var builder = new PodBuilder().withNewMetadata().withName(name).withNamespace("ml").withUid("uid-" + name)
                .withLabels(job.isEmpty() ? Map.of() : Map.of("hetgpu.io/job", job)).endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withNewResources()
                .addToLimits(gpus > 0 ? Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus))) : Map.of())
                .endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus();
        return builder.build();
    }

    /** Writes {@code assignment} on pod ml/{@code name} as the bind verb does: signed for the UID the API server gave it. */
    private void recordOn(String name, io.hetgpu.gpu.inventory.DeviceAssignment assignment) {
        client.pods().inNamespace("ml").withName(name).edit(pod -> new PodBuilder(pod).editMetadata()
                .withAnnotations(Map.of(io.hetgpu.gpu.inventory.HetgpuKeys.POD_GPU_DEVICES,
                        io.hetgpu.extender.TestTrust.signed(assignment, pod.getMetadata().getUid()))).endMetadata().build());
    }

    /** Not bound yet. */
    private static Pod pending(Pod pod) {
        pod.getStatus().setPhase("Pending");
        return pod;
    }

    private static Pod withClaim(Pod pod, String claim) {
        pod.getSpec().setVolumes(List.of(new io.fabric8.kubernetes.api.model.VolumeBuilder().withName("data")
                .withNewPersistentVolumeClaim().withClaimName(claim).endPersistentVolumeClaim().build()));
        return pod;
    }
}
