package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.cluster.ApiServerPodBinder;
import io.hetgpu.extender.cluster.InformerClusterView;
import io.hetgpu.extender.trust.RecordKeySecret;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.extender.trust.UntrustedRecords;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
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
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
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

    /**
     * Another extender on the same API server, wired as {@code Extender.start} wires one, its API calls of binds passing
     * through {@code wrap}: a test stages what happens between them.
     */
    private int startExtender(ExtenderConfig config, UnaryOperator<PodBinder> wrap) {
        var client = cluster.api().newClient();
        closing.add(client);
        var catalog = CardCatalog.defaults().withOverrides(config.tiers());
        var parser = new PodRequestParser(config.resourceName(), catalog);
        // The key every replica reads from the one Secret: each trusts the records the other signs.
        var key = new RecordKeySecret(client, client.getNamespace(), config.recordKeySecret(), new java.security.SecureRandom()).getOrCreate();
        var trust = new RecordTrust(key, Set.copyOf(config.schedulerNames()), Clock.systemUTC(), new UntrustedRecords(UntrustedRecords.DEFAULT_MEMORY));
        var view = new InformerClusterView(client, parser, config.rackLabel(), trust);
        closing.add(view);
        view.start().orTimeout(30, TimeUnit.SECONDS).join();
        var limits = new BindVerb.Limits(Set.copyOf(config.schedulerNames()), config.httpTimeout());
        var nodes = new NodeStateFactory(catalog, config.rackLabel(), config.resourceName(),
                NodeStateFactory.recordLifetime(config.httpTimeout()), Clock.systemUTC());
        var binder = ApiServerPodBinder.forBinds(client, limits.budget());
        closing.add(binder);
        var verbs = ExtenderVerbs.of(view, parser, nodes, new PlacementPolicy(config.policy()), (pod, table) -> { }, advice -> { },
                wrap.apply(binder), report -> { }, limits, io.hetgpu.extender.service.WholeJobs.Settings.DEFAULTS, trust);
        var vertx = Vertx.vertx();
        closing.add(() -> vertx.close().toCompletionStage().toCompletableFuture().join());
        var server = ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), verbs,
                new ExtenderMetrics()).toCompletionStage().toCompletableFuture().join();
        closing.add(server::close);
        return server.port();
    }

    /** A binder whose Binding of one pod waits (at most 3.5 s, inside a bind's budget of 4.5 s) until the test lets it go on. */
    private static final class HeldBinding implements PodBinder {
        private final PodBinder binder;
        private final String held;
        private final CountDownLatch release;

        HeldBinding(PodBinder binder, String held, CountDownLatch release) {
            this.binder = binder;
            this.held = held;
            this.release = release;
        }

        @Override
        public Pod pod(String namespace, String name) throws Refusal {
            return binder.pod(namespace, name);
        }

        @Override
        public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
            binder.annotate(namespace, name, resourceVersion, key, value);
        }

        @Override
        public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
            binder.removeAnnotation(namespace, name, key, value);
        }

        @Override
        public void bind(String namespace, String name, String uid, String node) throws Refusal {
            if (name.equals(held)) {
                try {
                    if (!release.await(3500, TimeUnit.MILLISECONDS)) {
                        throw new Refusal(503, "binding pod " + namespace + "/" + name + ": held too long by the test");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new Refusal(0, "interrupted");
                }
            }
            binder.bind(namespace, name, uid, node);
        }
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
        // A: the old leader's extender, B: the new leader's, both on one API server, neither aware of the other. A's
        // Binding of p1 waits (its record written) while B binds.
        var holdBinding = new CountDownLatch(1);
        var oldLeaderPort = startExtender(configuration.extender(), binder -> new HeldBinding(binder, "p1", holdBinding));
        var newLeader = cluster.startExtender(configuration.extender());
        var p1 = pods().submit("p1", 4, 1000, Map.of());
        var others = new ArrayList<Pod>();
        for (int i = 2; i <= 7; i++) {
            others.add(pods().submit("p" + i, 1, 1000, Map.of()));
        }
        var first = CompletableFuture.supplyAsync(() -> {
            try {
                return new ExtenderClient(configuration.schedulerCalling("http://127.0.0.1:" + oldLeaderPort).extenders().getFirst(), http)
                        .bind(p1, NODE);
            } catch (Exception e) {
                return "call failed: " + e;
            }
        });
        await("A has recorded p1's devices and B's informer shows them").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> newLeader.view().boundPods(NODE).stream().anyMatch(pod -> pod.uid().equals(p1.getMetadata().getUid()) && pod.binding()));
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
