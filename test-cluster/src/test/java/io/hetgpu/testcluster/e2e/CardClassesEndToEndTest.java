package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.demo.DemoCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.ExtenderClient;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Card classes as pod authors say them ({@code hetgpu.io/gpu-min-model}, {@code hetgpu.io/gpu-exclude-models}) over
 * the demo's cluster plus a node of two kinds of card, with the real extender configured from {@code manifests/}, its
 * bind verb and the real device plugins.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CardClassesEndToEndTest {

    private TestCluster cluster;
    private ExtenderClient extender;
    private SchedulerDriver scheduler;
    private TrainingPods pods;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var nodes = new ArrayList<>(DemoCluster.nodes());
        // Two A100 joined by NVLink and two T4 on one node.
        nodes.add(NodeSpec.gpu("mixed-1", "rack-b", "zone-1", "mixed"));
        cluster = TestCluster.start(nodes, dir, message -> { });
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var settings = configuration.schedulerCalling(cluster.startExtender(configuration.extender()));
        extender = new ExtenderClient(settings.extenders().getFirst(), HttpClient.newHttpClient());
        scheduler = new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), 1);
        pods = new TrainingPods(cluster.client());
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @BeforeEach
    void noPods() {
        new TrainingPods(cluster.client()).deleteAll();
    }

    @Test
    void a100OrNewerKeepsExactlyTheNodesWithAnA100OrH100() throws Exception {
        var pod = pods.submit("finetune", 1, 0, Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, "A100"));

        var outcome = extender.filter(pod, cluster.client().nodes().list().getItems());

        assertThat(outcome.feasible()).containsExactlyInAnyOrder("dgx-h100-1", "dgx-a100-1", "mixed-1");
        assertThat(outcome.failedAndUnresolvable().get("dgx1-v100-1")).contains("pod needs A100 or newer (tier 70 and up)");
        assertThat(outcome.failedAndUnresolvable().get("t4-1")).contains("pod needs A100 or newer");
    }

    @Test
    void excludedModelsTakeTheirNodesOutAndTheOthersStay() throws Exception {
        var pod = pods.submit("no-old-cards", 1, 0, Map.of(HetgpuKeys.POD_GPU_EXCLUDE_MODELS, "K80,T4"));

        var outcome = extender.filter(pod, cluster.client().nodes().list().getItems());

        assertThat(outcome.feasible()).containsExactlyInAnyOrder("dgx-h100-1", "dgx-a100-1", "dgx1-v100-1", "dgx1-v100-2", "mixed-1");
        assertThat(outcome.failedAndUnresolvable().get("k80-1")).contains("pod needs no K80 or T4");
    }

    @Test
    void onANodeWithTwoKindsOfCardSuchAPodIsGivenOnlyTheCardsItAccepts() {
        pods.submit("a100-or-newer", 1, 0, Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, "A100"), Map.of("kubernetes.io/hostname", "mixed-1"));
        pods.submit("not-a100", 1, 0, Map.of(HetgpuKeys.POD_GPU_EXCLUDE_MODELS, "A100"), Map.of("kubernetes.io/hostname", "mixed-1"));

        assertThat(scheduler.scheduleRound()).hasSize(2).allMatch(decision -> decision instanceof Decision.Bound);

        assertThat(modelsGiven("a100-or-newer")).containsExactly("A100");
        assertThat(modelsGiven("not-a100")).containsExactly("T4");
    }

    @Test
    void aMinimumModelTheTableDoesNotKnowIsThePodsOwnReason() throws Exception {
        var pod = pods.submit("typo", 1, 0, Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, "A1000"));

        var outcome = extender.filter(pod, cluster.client().nodes().list().getItems());

        assertThat(outcome.feasible()).isEmpty();
        assertThat(outcome.failedAndUnresolvable().values()).singleElement().satisfies(reason -> assertThat(reason)
                .contains(HetgpuKeys.POD_GPU_MIN_MODEL + ": unknown card model \"A1000\"").contains("known: K80"));
    }

    /** The card models of the devices the kubelet gave the pod's container, as its node's inventory names them. */
    private List<String> modelsGiven(String name) {
        var pod = pods.awaitRunning(name);
        var node = cluster.client().nodes().withName(pod.getSpec().getNodeName()).get();
        var inventory = node.getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_INVENTORY);
        return TrainingPods.devices(pod).stream().map(id -> modelOf(inventory, id)).toList();
    }

    private static String modelOf(String inventoryJson, String deviceId) {
        try {
            var topology = new InventoryCodec().decode(inventoryJson);
            return topology.device(topology.positionOf(deviceId).orElseThrow()).model();
        } catch (InventoryFormatException e) {
            throw new AssertionError(e);
        }
    }
}
