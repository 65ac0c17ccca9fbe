package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hetgpu.extender.Extender;
import io.hetgpu.extender.cluster.LearnedThroughputsConfigMap;
import io.hetgpu.extender.throughput.CardPriors;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.kubelet.SpeedTable;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The capability end to end: the extender as deployed learns how fast a class runs on each card from nothing but its
 * pods' ends, and places differently for it. Here "lstm" runs faster on P100 than on V100, against the priors' card
 * order; simulated kubelets end its pods after the run time the test's own {@link SpeedTable} gives. A high-priority
 * pod of it first goes where tiers say (V100); once a few runs have ended on each card, the next goes to P100, and an
 * extender started afterwards, reading what the first learned from the ConfigMap, places it there too.
 */
class LearnedPlacementEndToEndTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String V100_NODE = "dgx1-v100-1";
    private static final String P100_NODE = "dgx1-p100-1";
    private static final String LSTM = "lstm";
    /** Steps per GPU-second: the truth the extender is never told. P100 is 1.3x faster, where the priors say 0.5x. */
    private static final SpeedTable SPEEDS = SpeedTable.of(LSTM, Map.of("V100", 18.0, "P100", 24.0));
    /** Each pod's declared steps: 2 GPUs run it in 40 minutes on V100, 30 on P100, well over minRunSeconds. */
    private static final String WORK = "86400";
    private static final int HIGH = 1000;
    private static final int LOW = -100;
    private static final int NORMAL = 0;
    /** Runs per card: the median of 3 is the figure; one would do, the learner needs no more. */
    private static final int RUNS = 3;

    @TempDir
    Path dir;

    @Test
    void aClassFasterOnAnOlderCardMovesThereOnceItsRunsAreLearnedAndStaysAfterARestart() throws Exception {
        assertThat(CardPriors.relativeSpeed("P100").getAsDouble()).as("the priors rank P100 below V100")
                .isLessThan(CardPriors.relativeSpeed("V100").getAsDouble());
        var nodes = List.of(NodeSpec.gpu(V100_NODE, "rack-a", "zone-1", "dgx1-v100"), NodeSpec.gpu(P100_NODE, "rack-a", "zone-1", "dgx1-p100"));
        try (var cluster = TestCluster.start(nodes, dir, message -> { })) {
            var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
            var first = cluster.startExtender(configuration.extender());
            var scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(first), HttpClient.newHttpClient(), 1);
            var pods = new TrainingPods(cluster.client());

            // Before: nothing learned, so a high-priority pod of the class goes to the newest tier.
            assertThat(place(scheduler, pods, "lstm-0", HIGH)).as("placed before anything was learned").isEqualTo(V100_NODE);

            // Runs: high-priority pods stay on V100, low-priority ones take the oldest tier (P100: exploring, as they may).
            for (int i = 1; i < RUNS; i++) {
                pods.submit("lstm-" + i, 2, HIGH, lstm());
            }
            for (int i = 0; i < RUNS; i++) {
                pods.submit("lstm-low-" + i, 2, LOW, lstm());
            }
            assertThat(scheduler.scheduleRound()).hasSize(2 * RUNS - 1).allMatch(Decision.Bound.class::isInstance);
            for (int i = 0; i < RUNS; i++) {
                assertThat(pods.awaitRunning("lstm-" + i).getSpec().getNodeName()).isEqualTo(V100_NODE);
                assertThat(pods.awaitRunning("lstm-low-" + i).getSpec().getNodeName()).isEqualTo(P100_NODE);
            }
            for (int i = 0; i < RUNS; i++) {
                assertThat(cluster.endRun(NS, "lstm-" + i, SPEEDS).cardModel()).isEqualTo("V100");
                assertThat(cluster.endRun(NS, "lstm-low-" + i, SPEEDS).cardModel()).isEqualTo("P100");
            }
            var learning = first.learning().orElseThrow();
            await().atMost(PATIENCE).until(() -> learning.accepted() == 2 * RUNS);
            var learned = learning.learner().table().byClass().get(LSTM);
            assertThat(learned.get("V100").samples()).isEqualTo(RUNS);
            assertThat(learned.get("V100").throughputPerGpu()).isEqualTo(18.0);
            assertThat(learned.get("P100").samples()).isEqualTo(RUNS);
            assertThat(learned.get("P100").throughputPerGpu()).isEqualTo(24.0);

            // After: the same pod on the same free cluster goes to P100. As shipped (evictForFasterCards) a high-priority pod
            // refuses the V100s outright, now slower for it than the P100s; a pod of normal priority that prefers the fastest
            // cards still ranks both, and its Event says it was the learned speed.
            awaitEveryGpuFree(first);
            assertThat(place(scheduler, pods, "lstm-after", HIGH)).as("placed once the runs were learned").isEqualTo(P100_NODE);
            remove(cluster, "lstm-after");
            awaitEveryGpuFree(first);
            assertThat(place(scheduler, pods, "lstm-newest", NORMAL, Map.of(HetgpuKeys.POD_GPU_PREFERENCE, "newest")))
                    .as("a normal-priority pod preferring the fastest cards").isEqualTo(P100_NODE);
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(placementEvents(cluster, "lstm-newest")).anySatisfy(message -> assertThat(message)
                    .startsWith("best: " + P100_NODE).contains("lstm runs 1.3x faster per GPU on P100 than on V100 (learned, 3 and 3 runs)")));
            remove(cluster, "lstm-newest");

            // A restart: the extender that comes next reads the table back from the ConfigMap and places the same way.
            cluster.stopExtender(first);
            var stored = cluster.client().configMaps().inNamespace(NS).withName(LearnedThroughputsConfigMap.NAME).get();
            assertThat(LearnedStateCodec.fromJson(stored.getData().get(LearnedThroughputsConfigMap.DATA_KEY)).classes())
                    .singleElement().satisfies(row -> assertThat(row.workloadClass()).isEqualTo(LSTM));
            var second = cluster.startExtender(configuration.extender());
            await().atMost(PATIENCE).until(second.learning().orElseThrow()::restored);
            awaitEveryGpuFree(second);
            var again = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(second), HttpClient.newHttpClient(), 1);
            assertThat(place(again, pods, "lstm-restarted", HIGH)).as("placed by the extender started afterwards").isEqualTo(P100_NODE);
            assertThat(second.learning().orElseThrow().learner().table().byClass().get(LSTM).get("P100").samples()).isEqualTo(RUNS);
        }
    }

    private static Map<String, String> lstm() {
        return Map.of(HetgpuKeys.POD_WORKLOAD, LSTM, HetgpuKeys.POD_WORK, WORK);
    }

    /** Submits one 2-GPU pod of the class, schedules it alone, and says where it runs. */
    private static String place(SchedulerDriver scheduler, TrainingPods pods, String name, int priority) {
        return place(scheduler, pods, name, priority, Map.of());
    }

    private static String place(SchedulerDriver scheduler, TrainingPods pods, String name, int priority, Map<String, String> more) {
        var annotations = new java.util.HashMap<>(lstm());
        annotations.putAll(more);
        pods.submit(name, 2, priority, annotations);
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        return pods.awaitRunning(name).getSpec().getNodeName();
    }

    /**
     * Waits until the extender sees both nodes wholly free, as before the first pod: the device plugin republishes a
     * node's free GPUs shortly after kubelet releases an ended pod's, and until then the extender counts them held, which
     * would make the nodes differ by more than their cards.
     */
    private static void awaitEveryGpuFree(Extender extender) {
        await().atMost(PATIENCE).until(() -> Stream.of(V100_NODE, P100_NODE).allMatch(node -> {
            var free = extender.view().facts(node) == null ? null : extender.view().facts(node).free();
            try {
                return free != null && new FreeDevicesCodec().decode(free).uuids().size() == 8;
            } catch (InventoryFormatException e) {
                return false;
            }
        }));
    }

    /** The pod is deleted, and gone from the API server before the test goes on. */
    private static void remove(TestCluster cluster, String name) {
        var pod = cluster.client().pods().inNamespace(NS).withName(name);
        pod.delete();
        pod.waitUntilCondition(p -> p == null, PATIENCE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
    }

    /** The extender's HetgpuPlacement Events on the pod: where it would go and why. */
    private static List<String> placementEvents(TestCluster cluster, String pod) {
        return cluster.client().v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> "HetgpuPlacement".equals(e.getReason()) && pod.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getMessage()).toList();
    }
}
