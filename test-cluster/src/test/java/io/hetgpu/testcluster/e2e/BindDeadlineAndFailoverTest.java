package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.api.ApiServer.Interference;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.ExtenderClient;
import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bind verb over HTTP, with the real extender against the test cluster's API server, when the API server is slow and
 * when two extenders bind at once (two replicas, or the old and the new scheduler leader during a failover): a bind ends
 * within kube-scheduler's httpTimeout and leaves nothing behind, and a record written by one extender holds its devices
 * against the other.
 */
class BindDeadlineAndFailoverTest {

    private static final DeviceAssignmentCodec CODEC = new DeviceAssignmentCodec();
    private static final String NODE = "dgx-1";

    @TempDir
    Path dir;

    private TestCluster cluster;
    private DeployedConfiguration configuration;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<AutoCloseable> closing = new ArrayList<>();

    private void start() throws Exception {
        configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(NodeSpec.gpu(NODE, "rack-a", "zone-1", "dgx-a100")), dir, message -> { });
    }

    @AfterEach
    void stop() throws Exception {
        for (var resource : closing.reversed()) {
            resource.close();
        }
        if (cluster != null) {
            cluster.api().interfere(request -> Interference.NONE);
            cluster.close();
        }
    }

    private TrainingPods pods() {
        return new TrainingPods(cluster.client());
    }

    /** kube-scheduler's binder calling this extender, with the manifests' httpTimeout. */
    private ExtenderClient caller(Extender extender) {
        return new ExtenderClient(settingsFor(extender), http);
    }

    private ExtenderSettings settingsFor(Extender extender) {
        return configuration.schedulerCalling("http://127.0.0.1:" + extender.port()).extenders().getFirst();
    }

    /** Another extender process on the same API server, its requests told apart by their User-Agent. */
    private Extender startExtender(ExtenderConfig config, String userAgent) {
        var client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(cluster.api().config()).withUserAgent(userAgent).build())
                .build();
        var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), Optional.of(client));
        closing.add(client);
        closing.add(extender);
        extender.synced().orTimeout(30, TimeUnit.SECONDS).join();
        return extender;
    }

    private Pod read(String name) {
        return cluster.client().pods().inNamespace(TrainingPods.NS).withName(name).get();
    }

    private static List<String> recordOf(Pod pod) throws InventoryFormatException {
        var annotations = pod.getMetadata().getAnnotations();
        var text = annotations == null ? null : annotations.get(HetgpuKeys.POD_GPU_DEVICES);
        return text == null ? List.of() : CODEC.decode(text).devices();
    }

    @Test
    void aBindWithEveryApiCallSlowEndsWithinTheTimeoutAndLeavesNoRecord() throws Exception {
        start();
        var extender = cluster.startExtender(configuration.extender());
        var caller = caller(extender);
        var timeout = settingsFor(extender).httpTimeout();
        var pod = pods().submit("train", 2, 1000, Map.of());

        // Every answer leaves the API server 2 s late (watches aside): the read, the record, the Binding would take 6 s.
        cluster.api().interfere(request -> request.watch() ? Interference.NONE : new Interference.Slow(Duration.ofSeconds(2)));
        long started = System.nanoTime();
        var error = caller.bind(pod, NODE);
        var took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(took).as("answered within kube-scheduler's httpTimeout").isLessThan(timeout);
        assertThat(error).contains("ran out of time");
        // What it wrote is undone, though the API server is still slow; the Binding was never sent.
        await("the record is removed").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(recordOf(read("train"))).isEmpty());
        cluster.api().interfere(request -> Interference.NONE);
        assertThat(read("train").getSpec().getNodeName()).as("not bound").isNull();
    }

    @Test
    void aNewLeadersExtenderNeverGivesAGpuTheOldLeadersBindHasRecorded() throws Exception {
        start();
        // A: the old leader's extender, B: the new leader's, both on one API server, neither aware of the other.
        var oldLeader = startExtender(configuration.extender(), "old-leader");
        var newLeader = startExtender(configuration.extender(), "new-leader");
        var holdBinding = new CountDownLatch(1);
        // A's Binding of p1 reaches the API server and waits there (not yet in effect) while B binds: A's record is written.
        cluster.api().interfere(request -> {
            if ("old-leader".equals(request.userAgent()) && "POST".equals(request.method()) && request.path().contains("/pods/p1/binding")) {
                try {
                    // Well inside A's budget, so that whatever A's answer, the Binding is decided before A gives up.
                    return holdBinding.await(3, TimeUnit.SECONDS) ? Interference.NONE : new Interference.Refused(503);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return new Interference.Refused(503);
                }
            }
            return Interference.NONE;
        });
        var p1 = pods().submit("p1", 4, 1000, Map.of());
        var others = new ArrayList<Pod>();
        for (int i = 2; i <= 7; i++) {
            others.add(pods().submit("p" + i, 1, 1000, Map.of()));
        }
        var first = CompletableFuture.supplyAsync(() -> {
            try {
                return caller(oldLeader).bind(p1, NODE);
            } catch (Exception e) {
                return "call failed: " + e;
            }
        });
        await("A has recorded p1's devices and B's informer shows them").atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10))
                .until(() -> newLeader.view().boundPods(NODE).stream().anyMatch(pod -> pod.uid().equals("uid-p1") && pod.binding()));
        var recordedForP1 = recordOf(read("p1"));
        assertThat(recordedForP1).hasSize(4);

        var answers = new HashMap<String, String>();
        var newCaller = caller(newLeader);
        for (var pod : others) {
            answers.put(pod.getMetadata().getName(), newCaller.bind(pod, NODE));
        }
        holdBinding.countDown();
        answers.put("p1", first.get(10, TimeUnit.SECONDS));

        // Every bind either succeeded with devices of its own or answered an error and holds nothing.
        var holder = new HashMap<String, String>();
        for (var name : answers.keySet()) {
            var pod = read(name);
            var devices = recordOf(pod);
            if (answers.get(name).isEmpty()) {
                assertThat(pod.getSpec().getNodeName()).as("%s bound", name).isEqualTo(NODE);
                assertThat(devices).as("%s's record", name).isNotEmpty();
                for (var device : devices) {
                    assertThat(holder.putIfAbsent(device, name)).as("holder of %s when %s got it (answers %s)", device, name, answers).isNull();
                }
            } else {
                assertThat(pod.getSpec().getNodeName()).as("%s refused (%s), not bound", name, answers.get(name)).isNull();
            }
        }
        // B saw A's record: it gave p2..p7 only the four GPUs p1 left, never one of p1's.
        long boundByB = answers.entrySet().stream().filter(e -> !e.getKey().equals("p1") && e.getValue().isEmpty()).count();
        assertThat(boundByB).as("binds B made (answers %s)", answers).isEqualTo(4);
        for (var pod : others) {
            assertThat(recordOf(read(pod.getMetadata().getName()))).doesNotContainAnyElementsOf(recordedForP1);
        }
    }
}
