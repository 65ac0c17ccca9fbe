package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.BindingApiServer;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.cluster.ApiServerPodBinder;
import io.hetgpu.extender.cluster.InformerClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.trust.Distrust;
import io.hetgpu.extender.trust.RecordKey;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.extender.trust.UntrustedRecords;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Only the extender's own {@code hetgpu.io/gpu-devices} records hold GPUs: through informers and the real verbs, a record
 * a pod's author wrote (forged, future-dated, oversized, naming another node) leaves the node's GPUs free, while one the
 * bind verb wrote holds exactly its devices, in every replica that shares the key.
 */
class UntrustedRecordsTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final String SCHEDULER = "hetgpu-scheduler";
    private final BindingApiServer api = BindingApiServer.start();
    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
    private final NodeTopology n1 = TestTopologies.v100Pcie("n1", 4);
    private final List<AutoCloseable> started = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (var one : started.reversed()) {
            one.close();
        }
        api.close();
    }

    /** One extender: its informers and its verbs, trusting records by {@code key}. */
    private record Replica(InformerClusterView view, ExtenderVerbs verbs, RecordTrust trust) {
    }

    private Replica replica(RecordKey key) {
        var trust = new RecordTrust(key, Set.of(SCHEDULER), Clock.systemUTC(), new UntrustedRecords(UntrustedRecords.DEFAULT_MEMORY));
        var view = new InformerClusterView(api.client(), parser, "topology.hetgpu.io/rack", trust);
        started.add(view);
        var verbs = ExtenderVerbs.of(view, parser, new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack", "nvidia.com/gpu"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { }, advice -> { }, new ApiServerPodBinder(api.client()),
                report -> { }, BindVerb.Limits.DEFAULTS, WholeJobs.Settings.DEFAULTS, trust);
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.synced() && view.nodes().size() == 2);
        return new Replica(view, verbs, trust);
    }

    private void nodes() {
        for (var entry : Map.of("n1", n1, "n2", TestTopologies.v100Pcie("n2", 4)).entrySet()) {
            var topology = entry.getValue();
            api.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(entry.getKey())
                    .withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, TestTopologies.inventory(topology),
                            HetgpuKeys.ANNOTATION_FREE, TestTopologies.allFree(topology)))
                    .endMetadata().build()).create();
        }
    }

    private Pod create(String name, int gpus, String schedulerName, String node) {
        return api.client().pods().inNamespace("ml").resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace("ml").endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).withNodeName(node).addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(gpus == 0 ? Map.of() : Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus))))
                .endResources().endContainer().endSpec()
                .withNewStatus().withPhase(node == null ? "Pending" : "Running").endStatus().build()).create();
    }

    /** Writes a record on the pod, built from its UID by {@code record} (signed or not), and waits until {@code replica} has seen it. */
    private void record(Replica replica, Pod pod, UnaryOperator<String> record) {
        var text = record.apply(pod.getMetadata().getUid());
        var written = api.client().pods().inNamespace("ml").withName(pod.getMetadata().getName()).edit(p -> new PodBuilder(p)
                .editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, text).endMetadata().build());
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            var seen = replica.view().podByUid(pod.getMetadata().getUid());
            return seen != null && seen.getMetadata().getResourceVersion().equals(written.getMetadata().getResourceVersion());
        });
    }

    private List<String> all() {
        return List.of(0, 1, 2, 3).stream().map(p -> n1.device(p).uuid()).toList();
    }

    /** Whether the filter keeps n1 for a pod of hetgpu-scheduler asking {@code gpus}: n1 has that many free. */
    private static boolean n1Fits(Replica replica, int gpus) {
        var asking = new PodBuilder().withNewMetadata().withName("asking-" + gpus).withNamespace("ml").withUid("asking-" + gpus).endMetadata()
                .withNewSpec().withSchedulerName(SCHEDULER).addNewContainer().withName("main").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer().endSpec().build();
        var result = replica.verbs().service().filter(new ExtenderArgs(asking, null, List.of("n1")));
        assertThat(result.error()).isEmpty();
        return result.nodeNames().contains("n1");
    }

    private static String signed(RecordKey key, DeviceAssignment record, String uid) {
        return new DeviceAssignmentCodec().encode(record.signed(key.sign(record, uid)));
    }

    @Test
    void aHandWrittenRecordOnAPodNoSchedulerPlacesHoldsNothing() {
        nodes();
        var extender = replica(TestTrust.KEY);
        // Asks no GPU, never scheduled, and claims every GPU of n1 until 2099: the UUIDs are public on the Node.
        var squatter = create("squatter", 0, "nobody", null);
        record(extender, squatter, uid -> new DeviceAssignmentCodec().encode(new DeviceAssignment("n1", all(),
                Instant.parse("2099-01-01T00:00:00Z"))));

        assertThat(n1Fits(extender, 4)).as("n1 still has its 4 GPUs free").isTrue();
        assertThat(extender.view().boundPods("n1")).isEmpty();
        assertThat(extender.trust().refusals().count(Distrust.NOT_SCHEDULABLE)).isEqualTo(1);
    }

    @Test
    void aForgedRecordOnAPendingPodOfTheSchedulerHoldsNothing() {
        nodes();
        var extender = replica(TestTrust.KEY);
        var unsigned = create("unsigned", 4, SCHEDULER, null);
        record(extender, unsigned, uid -> new DeviceAssignmentCodec().encode(new DeviceAssignment("n1", all(), Instant.now())));
        var wronglySigned = create("wrongly-signed", 4, SCHEDULER, null);
        record(extender, wronglySigned, uid -> signed(TestTrust.key((byte) 9), new DeviceAssignment("n1", all(), Instant.now()), uid));
        var copied = create("copied", 4, SCHEDULER, null);
        // A record the extender did sign, but for another pod.
        record(extender, copied, uid -> signed(TestTrust.KEY, new DeviceAssignment("n1", all(), Instant.now()), "another-pods-uid"));

        assertThat(n1Fits(extender, 4)).isTrue();
        assertThat(extender.trust().refusals().count(Distrust.UNSIGNED)).isEqualTo(1);
        assertThat(extender.trust().refusals().count(Distrust.BAD_SIGNATURE)).isEqualTo(2);
    }

    @Test
    void aFutureDatedRecordHoldsNothingEvenSigned() {
        nodes();
        var extender = replica(TestTrust.KEY);
        var pod = create("later", 4, SCHEDULER, null);
        record(extender, pod, uid -> signed(TestTrust.KEY, new DeviceAssignment("n1", all(), Instant.now().plus(Duration.ofHours(1))), uid));

        assertThat(n1Fits(extender, 4)).isTrue();
        assertThat(extender.trust().refusals().count(Distrust.FUTURE)).isEqualTo(1);
    }

    @Test
    void aRecordOfMoreDevicesThanThePodAsksHoldsNothingAndABoundPodHoldsWhatItAsks() {
        nodes();
        var extender = replica(TestTrust.KEY);
        var pending = create("pending", 1, SCHEDULER, null);
        record(extender, pending, uid -> signed(TestTrust.KEY, new DeviceAssignment("n1", all(), Instant.now()), uid));
        assertThat(n1Fits(extender, 4)).as("a pod not bound yet, its record refused").isTrue();

        var bound = create("bound", 1, SCHEDULER, "n1");
        record(extender, bound, uid -> signed(TestTrust.KEY, new DeviceAssignment("n1", all(), Instant.now()), uid));

        assertThat(extender.view().boundPods("n1")).singleElement().satisfies(pod -> {
            assertThat(pod.gpuCount()).as("from its request").isEqualTo(1);
            assertThat(pod.assigned()).as("its record refused: its GPU predicted").isFalse();
        });
        assertThat(n1Fits(extender, 3)).isTrue();
        assertThat(n1Fits(extender, 4)).isFalse();
        assertThat(extender.trust().refusals().count(Distrust.TOO_MANY_DEVICES)).isEqualTo(2);
    }

    @Test
    void aRecordNamingAnotherNodeThanThePodsHoldsNothingThere() {
        nodes();
        var extender = replica(TestTrust.KEY);
        var elsewhere = create("elsewhere", 4, SCHEDULER, "n2");
        record(extender, elsewhere, uid -> signed(TestTrust.KEY, new DeviceAssignment("n1", all(), Instant.now()), uid));

        assertThat(n1Fits(extender, 4)).isTrue();
        assertThat(extender.trust().refusals().count(Distrust.OTHER_NODE)).isEqualTo(1);
    }

    @Test
    void aRecordTheBindVerbWroteHoldsExactlyItsDevicesInEveryReplicaSharingTheKey() throws Exception {
        nodes();
        var first = replica(TestTrust.KEY);
        var second = replica(TestTrust.KEY);
        var stranger = replica(TestTrust.key((byte) 9));
        var pod = create("pair", 2, SCHEDULER, null);

        var error = first.verbs().binding().bind(new ExtenderBindingArgs("pair", "ml", pod.getMetadata().getUid(), "n1")).error();

        assertThat(error).isEmpty();
        var record = new DeviceAssignmentCodec().decode(api.client().pods().inNamespace("ml").withName("pair").get()
                .getMetadata().getAnnotations().get(HetgpuKeys.POD_GPU_DEVICES));
        assertThat(record.signature()).isNotEmpty();
        for (var replica : List.of(first, second)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> replica.view().boundPods("n1").stream().anyMatch(BoundPod::assigned));
            assertThat(replica.view().boundPods("n1")).singleElement().extracting(BoundPod::devices).isEqualTo(record.devices());
            assertThat(n1Fits(replica, 2)).isTrue();
            assertThat(n1Fits(replica, 3)).isFalse();
            assertThat(replica.trust().refusals().count(Distrust.BAD_SIGNATURE)).isZero();
        }
        // A replica with another key (its Secret deleted and made again) predicts the pod's GPUs instead.
        await().atMost(Duration.ofSeconds(10)).until(() -> !stranger.view().boundPods("n1").isEmpty());
        assertThat(stranger.view().boundPods("n1")).singleElement().satisfies(held -> assertThat(held.assigned()).isFalse());
        assertThat(stranger.trust().refusals().count(Distrust.BAD_SIGNATURE)).isEqualTo(1);
    }
}
