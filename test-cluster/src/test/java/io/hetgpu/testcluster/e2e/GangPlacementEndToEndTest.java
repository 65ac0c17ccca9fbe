package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.ExtenderClient;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ps/worker job's workers over HTTP through the real extender (configured from {@code manifests/}), which reads the job's
 * pods still waiting for a node from its pod informer: the first worker goes where the second can follow.
 */
class GangPlacementEndToEndTest {

    @TempDir
    Path dir;

    @Test
    void theFirstWorkerGoesWhereTheSecondCanFollow() throws Exception {
        // Two DGX-1 in two racks; dgx-a already runs a 4-GPU pod. Packing alone would put the first worker on dgx-a,
        // the fuller node, and the second would have to go to dgx-b: one job over two racks.
        try (var cluster = TestCluster.start(List.of(NodeSpec.gpu("dgx-a", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("dgx-b", "rack-b", "zone-1", "dgx1-v100")), dir, message -> { })) {
            var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
            var settings = configuration.schedulerCalling(cluster.startExtender(configuration.extender()));
            var scheduler = new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), 1);
            var pods = new TrainingPods(cluster.client());
            pods.submit("batch", 4, -100, Map.of(), Map.of("kubernetes.io/hostname", "dgx-a"));
            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
            pods.awaitRunning("batch");

            for (var worker : List.of("worker-0", "worker-1")) {
                pods.submit(worker, 4, 0, Map.of());
                cluster.client().pods().inNamespace(NS).withName(worker).edit(pod -> new PodBuilder(pod).editMetadata()
                        .addToLabels(HetgpuKeys.POD_JOB, "resnet").addToLabels(HetgpuKeys.POD_ROLE, "worker").endMetadata().build());
            }
            // The extender learns of worker-1 from its informer, a moment after the API server: until then it cannot know
            // that worker-0 has a partner waiting. Asked over HTTP as kube-scheduler asks.
            var extender = new ExtenderClient(settings.extenders().getFirst(), HttpClient.newHttpClient());
            var nodes = cluster.client().nodes().list().getItems();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                var scores = extender.prioritize(cluster.client().pods().inNamespace(NS).withName("worker-0").get(), nodes);
                return scores.get("dgx-b") > scores.get("dgx-a");
            });

            assertThat(scheduler.scheduleRound()).hasSize(2).allMatch(decision -> decision instanceof Decision.Bound);
            for (var worker : List.of("worker-0", "worker-1")) {
                assertThat(pods.awaitRunning(worker).getSpec().getNodeName()).as(worker).isEqualTo("dgx-b");
            }
        }
    }
}
