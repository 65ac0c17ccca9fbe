package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * One extender over a cluster in the middle of a migration: hetgpu's device plugin on one GPU node, NVIDIA's
 * (a plain plugin) with GPU Feature Discovery's labels on another, a plain plugin with no labels on a third,
 * and CPU nodes. The real extender, scheduler driver and kubelets, configured from {@code manifests/}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MixedGpuPluginsTest {

    private static final String NS = "default";
    private static final String HOSTNAME = "kubernetes.io/hostname";

    private TestCluster cluster;
    private SchedulerDriver scheduler;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.gpu("v100-hetgpu", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.featureDiscovery("k80-gfd", "rack-a", "zone-1", "k80-4x"),
                NodeSpec.allocatableOnly("t4-plain", "rack-b", "zone-1", "t4-4x"),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1"),
                NodeSpec.cpu("cpu-2", "rack-b", "zone-1")), dir, message -> { });
        var extender = cluster.startExtender(configuration.extender());
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender),
                HttpClient.newHttpClient(), 1);
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
    void theNodesAreWhatEachPluginMakesOfThem() {
        var gfd = cluster.client().nodes().withName("k80-gfd").get();
        assertThat(gfd.getMetadata().getLabels()).containsEntry(NvidiaKeys.GFD_PRODUCT, "Tesla-K80")
                .containsEntry(NvidiaKeys.GFD_COUNT, "8").doesNotContainKey(HetgpuKeys.LABEL_GPU_MODEL);
        assertThat(gfd.getMetadata().getAnnotations()).doesNotContainKey(HetgpuKeys.ANNOTATION_INVENTORY);
        assertThat(gfd.getStatus().getAllocatable()).containsEntry(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("8"));

        var plain = cluster.client().nodes().withName("t4-plain").get();
        assertThat(plain.getMetadata().getLabels()).doesNotContainKey(NvidiaKeys.GFD_PRODUCT);
        assertThat(plain.getStatus().getAllocatable()).containsEntry(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("4"));
    }

    @Test
    void gpuPodsArePlacedOnTheGfdNodeAndRunOnItsPlugin() {
        // Low priority goes to the oldest cards: the K80s GFD describes, not the V100s or the unknown cards.
        submit("sweep-0", 1, -100, Map.of(), Map.of());
        assertThat(scheduleOne("sweep-0")).isEqualTo("k80-gfd");
        assertThat(devices(awaitRunning("sweep-0"))).hasSize(1);

        // A card filter reads GFD's labels as it reads hetgpu's inventory.
        submit("k80-pair", 2, 0, Map.of(HetgpuKeys.POD_GPU_MODELS, "K80"), Map.of());
        assertThat(scheduleOne("k80-pair")).isEqualTo("k80-gfd");
        assertThat(devices(awaitRunning("k80-pair"))).hasSize(2).doesNotContainAnyElementsOf(devices(awaitRunning("sweep-0")));

        // Five K80s left of eight: six do not fit anywhere, five fit there.
        submit("k80-six", 6, 0, Map.of(HetgpuKeys.POD_GPU_MODELS, "K80"), Map.of());
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.reasons()).containsEntry("v100-hetgpu", "node has 8 V100 (16 GiB, cc 7.0), pod needs K80")
                        .containsEntry("k80-gfd", "Insufficient nvidia.com/gpu"));
        cluster.client().pods().inNamespace(NS).withName("k80-six").delete();
        cluster.client().pods().inNamespace(NS).withName("k80-six").waitUntilCondition(p -> p == null, 10, TimeUnit.SECONDS);
        submit("k80-five", 5, 0, Map.of(HetgpuKeys.POD_GPU_MODELS, "K80"), Map.of());
        assertThat(scheduleOne("k80-five")).isEqualTo("k80-gfd");
    }

    @Test
    void cpuPodsAreKeptOffEveryKindOfGpuNode() {
        for (int i = 0; i < 4; i++) {
            submit("serve-" + i, 0, 0, Map.of(), Map.of());
            assertThat(scheduleOne("serve-" + i)).isIn("cpu-1", "cpu-2");
        }
    }

    @Test
    void nvlinkPodsGoWhereNvlinkIsKnownAndElsewhereAreToldWhy() {
        submit("nvlink", 2, 0, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"), Map.of());
        assertThat(scheduleOne("nvlink")).isEqualTo("v100-hetgpu");

        submit("nvlink-k80", 2, 0, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"), Map.of(HOSTNAME, "k80-gfd"));
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.reasons().get("k80-gfd")).startsWith("NVLink unknown: node not served by hetgpu's device plugin"));
    }

    @Test
    void aNodeOfUnknownModelTakesPodsThatAskOnlyForGpusAndRefusesOthersSayingWhy() {
        submit("any-gpu", 2, 0, Map.of(), Map.of(HOSTNAME, "t4-plain"));
        assertThat(scheduleOne("any-gpu")).isEqualTo("t4-plain");
        assertThat(devices(awaitRunning("any-gpu"))).hasSize(2);

        submit("t4-only", 1, 0, Map.of(HetgpuKeys.POD_GPU_MODELS, "T4"), Map.of(HOSTNAME, "t4-plain"));
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.reasons().get("t4-plain")).startsWith("GPU model unknown: node has 4 GPUs of unknown model"));
    }

    private String scheduleOne(String pod) {
        var decisions = scheduler.scheduleRound();
        assertThat(decisions).singleElement().isInstanceOf(Decision.Bound.class);
        var bound = (Decision.Bound) decisions.getFirst();
        assertThat(bound.pod()).isEqualTo(NS + "/" + pod);
        return bound.node();
    }

    private void submit(String name, int gpus, int priority, Map<String, String> annotations, Map<String, String> nodeSelector) {
        new TrainingPods(cluster.client()).submit(name, gpus, priority, annotations, nodeSelector);
    }

    private Pod awaitRunning(String name) {
        return new TrainingPods(cluster.client()).awaitRunning(name);
    }

    private static List<String> devices(Pod pod) {
        return TrainingPods.devices(pod);
    }
}
