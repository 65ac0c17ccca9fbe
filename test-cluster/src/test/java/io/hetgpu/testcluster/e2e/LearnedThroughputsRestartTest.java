package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.cluster.LearnedThroughputsConfigMap;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extender as deployed learns how fast a workload runs from its pods' ends, as kubelet reports them (phase
 * Succeeded, the container's start and finish, its termination message {@code hetgpu.io/work: N}), keeps what it
 * learned in the ConfigMap {@code hetgpu-throughputs}, and an extender started after it reads it back: the same
 * figures, the runs not counted a second time although their pods are still there, and shown on its metrics.
 */
class LearnedThroughputsRestartTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** Steps each pod reports for its 10 minutes on 2 V100s: 10, 11 and 12 steps per GPU-second. */
    private static final List<Integer> WORK = List.of(12_000, 13_200, 14_400);

    @TempDir
    Path dir;

    @Test
    void anExtenderStartedAfterAnotherReadsBackWhatTheFirstLearned() throws Exception {
        try (var cluster = TestCluster.start(List.of(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx1-v100")), dir, message -> { })) {
            var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
            var first = cluster.startExtender(configuration.extender());
            var scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(first), HttpClient.newHttpClient(), 1);
            var pods = new TrainingPods(cluster.client());
            for (int i = 0; i < WORK.size(); i++) {
                pods.submit("train-" + i, 2, 0, Map.of(HetgpuKeys.POD_WORKLOAD, "resnet50"));
            }
            assertThat(scheduler.scheduleRound()).hasSize(WORK.size()).allMatch(Decision.Bound.class::isInstance);
            var ended = Instant.now();
            for (int i = 0; i < WORK.size(); i++) {
                pods.awaitRunning("train-" + i);
                end(cluster, "train-" + i, ended.minusSeconds(600), ended, WORK.get(i));
            }
            var learning = first.learning().orElseThrow();
            await().atMost(PATIENCE).until(() -> learning.accepted() == WORK.size());
            var learned = learning.learner().table().byClass().get("resnet50").get("V100");
            assertThat(learned.samples()).isEqualTo(WORK.size());
            assertThat(learned.throughputPerGpu()).isBetween(10.0, 12.0);

            cluster.stopExtender(first);
            var stored = cluster.client().configMaps().inNamespace(NS).withName(LearnedThroughputsConfigMap.NAME).get();
            assertThat(stored.getMetadata().getAnnotations()).containsEntry(LearnedThroughputsConfigMap.LEARNED_THROUGH, seconds(ended));
            assertThat(LearnedStateCodec.fromJson(stored.getData().get(LearnedThroughputsConfigMap.DATA_KEY)).classes()).hasSize(1);

            var second = cluster.startExtender(configuration.extender());
            var again = second.learning().orElseThrow();
            await().atMost(PATIENCE).until(again::restored);
            var readBack = again.learner().table().byClass().get("resnet50").get("V100");
            assertThat(readBack.samples()).as("the runs read back, and not learned a second time from their pods").isEqualTo(WORK.size());
            assertThat(readBack.throughputPerGpu()).isEqualTo(learned.throughputPerGpu());
            assertThat(again.accepted()).isZero();
            assertThat(metrics(second)).contains("hetgpu_extender_learned_samples{card=\"V100\",workload=\"resnet50\"} 3.0")
                    .contains("hetgpu_extender_learned_throughput{card=\"V100\",workload=\"resnet50\"} " + learned.throughputPerGpu());
        }
    }

    /** The pod's end as kubelet writes it: Succeeded, its container terminated with the line the job wrote to its termination log. */
    private static void end(TestCluster cluster, String name, Instant started, Instant finished, int work) {
        cluster.client().pods().inNamespace(NS).withName(name).editStatus(pod -> new PodBuilder(pod).editStatus().withPhase("Succeeded")
                .withContainerStatuses(new ContainerStatusBuilder().withName("main").withReady(false).withNewState().withNewTerminated()
                        .withExitCode(0).withReason("Completed").withStartedAt(seconds(started)).withFinishedAt(seconds(finished))
                        .withMessage("loss 0.12\nhetgpu.io/work: " + work + "\n").endTerminated().endState().build())
                .endStatus().build());
    }

    /** As the API server writes times: whole seconds. */
    private static String seconds(Instant instant) {
        return instant.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }

    private static String metrics(Extender extender) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + extender.metricsPort() + "/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
    }
}
