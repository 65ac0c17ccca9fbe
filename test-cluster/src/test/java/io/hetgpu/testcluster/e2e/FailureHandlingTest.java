package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.policy.EvictionFloor;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What happens to placement when parts of the system fail, on a small test cluster with the real components. */
class FailureHandlingTest {

    private static final String NS = "default";

    @TempDir
    Path dir;

    private TestCluster cluster;
    private DeployedConfiguration configuration;

    @BeforeEach
    void start() throws Exception {
        configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.gpu("v100-1", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("k80-1", "rack-b", "zone-1", "k80-4x"),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1")), dir, message -> { });
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    private SchedulerDriver hetgpu() {
        var extender = cluster.startExtender(configuration.extender());
        return driver(configuration.schedulerCalling(extender));
    }

    private SchedulerDriver driver(SchedulerSettings settings) {
        return new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), 1);
    }

    private Pod submit(String name, int gpus, int priority, Map<String, String> annotations) {
        return new TrainingPods(cluster.client()).submit(name, gpus, priority, annotations);
    }

    private Pod awaitRunning(String name) {
        return new TrainingPods(cluster.client()).awaitRunning(name);
    }

    private List<String> devices(Pod pod) {
        return TrainingPods.devices(pod);
    }

    @Test
    void kubeletRestartMidRunThePluginRegistersAgainAndSchedulingContinues() throws Exception {
        var scheduler = hetgpu();
        submit("before", 2, 1000, Map.of());
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        awaitRunning("before");

        var kubelet = cluster.kubelet("v100-1");
        kubelet.restart();
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.registrations().size() == 2);

        submit("after", 2, 1000, Map.of());
        assertThat(scheduler.scheduleRound()).singleElement()
                .isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo("v100-1"));
        assertThat(devices(awaitRunning("after"))).doesNotContainAnyElementsOf(devices(awaitRunning("before")));
    }

    @Test
    void vanishedNodeGetsNoNewPods() throws Exception {
        var scheduler = hetgpu();

        cluster.vanish("v100-1");
        submit("high", 2, 1000, Map.of());

        // The V100 box would win for a high-priority pod; with it gone the K80 box takes the pod.
        assertThat(scheduler.scheduleRound()).singleElement()
                .isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo("k80-1"));
        awaitRunning("high");
    }

    @Test
    void withTheEvictionFloorOnAVanishedNodesCardsAreNoneThatPreemptionCouldFree() throws Exception {
        // The vanished V100 box's GPUs look free to the extender; but a tainted node gets no new pod, so the floor must
        // not keep the urgent pod waiting for them while the K80s are free.
        var extender = cluster.startExtender(configuration.extender().withEvictionFloor(new EvictionFloor(0.8)));
        var scheduler = driver(configuration.schedulerCalling(extender));

        cluster.vanish("v100-1");
        submit("high", 2, 1000, Map.of());

        assertThat(scheduler.scheduleRound()).singleElement()
                .isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo("k80-1"));
    }

    @Test
    void unhealthyGpuIsGivenToNoNewPod() {
        var scheduler = hetgpu();
        var sick = cluster.gpus("v100-1").topology().device(0).uuid();
        cluster.gpus("v100-1").setHealth(sick, DeviceHealth.UNHEALTHY, "XID 48 (double-bit ECC error)");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cluster.client().nodes().withName("v100-1").get()
                .getStatus().getAllocatable().get(HetgpuKeys.DEFAULT_RESOURCE_NAME)).isEqualTo(new Quantity("7")));

        for (int i = 0; i < 7; i++) {
            submit("train-" + i, 1, 1000, Map.of());
        }
        var decisions = scheduler.scheduleRound();

        assertThat(decisions).allSatisfy(d -> assertThat(d).isInstanceOfSatisfying(Decision.Bound.class,
                b -> assertThat(b.node()).isEqualTo("v100-1")));
        for (int i = 0; i < 7; i++) {
            assertThat(devices(awaitRunning("train-" + i))).doesNotContain(sick);
        }
    }

    @Test
    void extenderDownFailsTheAttemptUnlessIgnorable() throws Exception {
        String deadUrl;
        try (var socket = new ServerSocket(0)) {
            deadUrl = "http://127.0.0.1:" + socket.getLocalPort();
        }
        submit("train", 1, 1000, Map.of());

        var strict = driver(configuration.schedulerCalling(deadUrl, e -> e.withIgnorable(false)));
        assertThat(strict.scheduleRound()).singleElement().isInstanceOf(Decision.Failed.class);
        assertThat(cluster.client().pods().inNamespace(NS).withName("train").get().getSpec().getNodeName()).isNull();
        assertThat(events("train")).anySatisfy(e -> assertThat(e).startsWith("FailedScheduling").contains(deadUrl));

        // Ignorable, the extender's filter and scores are skipped; its bind verb is not (kube-scheduler's extender binder
        // ignores ignorable), so the attempt fails at binding and the pod stays pending, to be retried.
        var lenient = driver(configuration.schedulerCalling(deadUrl, e -> e.withIgnorable(true)));
        assertThat(lenient.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Failed.class,
                failed -> assertThat(failed.error()).startsWith("binding rejected: extender " + deadUrl));
        assertThat(cluster.client().pods().inNamespace(NS).withName("train").get().getSpec().getNodeName()).isNull();
        // Without the bind verb (the degraded mode), an ignorable extender that is down leaves kube-scheduler to bind.
        var lenientNoBind = driver(configuration.schedulerCalling(deadUrl, e -> e.withIgnorable(true).withoutBindVerb()));
        assertThat(lenientNoBind.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        awaitRunning("train");
    }

    @Test
    void badAnnotationGivesAClearReasonAndDisturbsNothingElse() {
        var scheduler = hetgpu();
        submit("bad", 1, 1000, Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "lots"));
        submit("good", 1, 1000, Map.of());

        var decisions = scheduler.scheduleRound();

        assertThat(decisions).filteredOn(d -> d.pod().equals("default/bad")).singleElement()
                .isInstanceOfSatisfying(Decision.Unschedulable.class, u -> assertThat(u.message()).contains("lots"));
        assertThat(decisions).filteredOn(d -> d.pod().equals("default/good")).singleElement().isInstanceOf(Decision.Bound.class);
        assertThat(events("bad")).anySatisfy(e -> assertThat(e).startsWith("FailedScheduling").contains("lots"));
        awaitRunning("good");
    }

    private List<String> events(String pod) {
        return cluster.client().v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> e.getInvolvedObject().getName().equals(pod))
                .map(e -> e.getReason() + ": " + e.getMessage()).toList();
    }
}
