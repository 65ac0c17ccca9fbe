package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * kube-scheduler's preemption over HTTP with the real extender: a full cluster of a DGX-1 (V100) and a DGX A100, both
 * NVLink, each running four 2-GPU low-priority pods, and an urgent pod that needs eight NVLink-connected GPUs. For
 * kube-scheduler alone the two are equal candidates (as many victims, of the same priority); hetgpu's preempt verb
 * keeps the one that gives the urgent pod the newest cards, so the A100s are freed for it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PreemptionOnTheNewestCardsTest {

    private static final String NS = "default";

    private TestCluster cluster;
    private SchedulerDriver scheduler;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.gpu("dgx1", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("a100", "rack-b", "zone-1", "dgx-a100")), dir, message -> { });
        var extender = cluster.startExtender(configuration.extender());
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling("http://127.0.0.1:" + extender.port()),
                HttpClient.newHttpClient(), 1).preempting(1, TieBreak.random(new Random(1)));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void theUrgentPodEvictsThePodsOnTheNewestCardsAndRunsThere() {
        // The A100s' pods start first, so kube-scheduler alone would evict the DGX-1's (its last criterion: the
        // victims that started latest lose the least work); hetgpu keeps the newest cards for the urgent pod.
        for (int i = 0; i < 8; i++) {
            submit("batch-" + i, 2, -100, Map.of(HetgpuKeys.POD_GPU_MODELS, i < 4 ? "A100" : "V100"));
            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
            awaitRunning("batch-" + i);
        }
        submit("urgent", 8, 1000, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"));

        var first = scheduler.scheduleRound();
        assertThat(first).singleElement().isInstanceOfSatisfying(Decision.Nominated.class, nominated -> {
            assertThat(nominated.node()).isEqualTo("a100");
            assertThat(nominated.victims()).hasSize(4).allSatisfy(victim -> assertThat(victim).startsWith(NS + "/batch-"));
        });
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems())
                .filteredOn(pod -> "dgx1".equals(pod.getSpec().getNodeName())).hasSize(4);

        // Once the kubelet has freed the victims' GPUs and the plugin has published them, the pod is bound there.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> scheduler.scheduleRound().stream()
                .anyMatch(decision -> decision instanceof Decision.Bound bound && bound.pod().equals(NS + "/urgent")));
        var urgent = awaitRunning("urgent");
        assertThat(urgent.getSpec().getNodeName()).isEqualTo("a100");
        assertThat(urgent.getMetadata().getAnnotations().get(SimulatedKubelet.DEVICES_ANNOTATION).split(",")).hasSize(8);
    }

    private void submit(String name, int gpus, int priority, Map<String, String> annotations) {
        var pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name)
                .addToAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("train").withNewResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(gpus))).endResources()
                .endContainer().endSpec().withNewStatus().withPhase("Pending").endStatus().build();
        cluster.client().pods().resource(pod).create();
    }

    private Pod awaitRunning(String name) {
        return cluster.client().pods().inNamespace(NS).withName(name)
                .waitUntilCondition(p -> p != null && "Running".equals(p.getStatus().getPhase()), 15, TimeUnit.SECONDS);
    }
}
