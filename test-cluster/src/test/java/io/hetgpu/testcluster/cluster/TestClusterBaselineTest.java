package io.hetgpu.testcluster.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster without hetgpu's extender: kube-scheduler's own fit and spreading, the real plugins and kubelets. */
class TestClusterBaselineTest {

    @Test
    void podsRunOnGpuNodesWithDevicesFromTheRealPlugin(@TempDir Path dir) throws Exception {
        var nodes = List.of(NodeSpec.gpu("k80-1", "rack-a", "zone-1", "k80-4x"), NodeSpec.gpu("t4-1", "rack-b", "zone-1", "t4-4x"),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1"));
        try (var cluster = TestCluster.start(nodes, dir, message -> { })) {
            var scheduler = new SchedulerDriver(cluster.client(),
                    DeployedConfiguration.load(ProjectFiles.manifests()).scheduler().withoutExtenders(), HttpClient.newHttpClient(), 7);
            for (int i = 0; i < 3; i++) {
                cluster.client().pods().resource(new PodBuilder().withNewMetadata().withName("train-" + i).withNamespace("default").endMetadata()
                        .withNewSpec().withSchedulerName(scheduler.settings().schedulerName())
                        .addNewContainer().withName("main").withImage("train").withNewResources()
                        .addToLimits("nvidia.com/gpu", new Quantity("4")).endResources().endContainer().endSpec()
                        .withNewStatus().withPhase("Pending").endStatus().build()).create();
            }

            var decisions = scheduler.scheduleRound();

            // 12 GPUs asked for, 8 on K80 + 4 on T4: all three fit, none on the CPU node.
            assertThat(decisions).allSatisfy(d -> assertThat(d).isInstanceOf(Decision.Bound.class));
            assertThat(decisions).extracting(d -> ((Decision.Bound) d).node()).doesNotContain("cpu-1");
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(cluster.client().pods().inNamespace("default").list().getItems())
                    .allSatisfy(pod -> assertThat(pod.getStatus().getPhase()).isEqualTo("Running")));
        }
    }
}
