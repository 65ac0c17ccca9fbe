package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ForwardingClusterView;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A filter that plans a whole job runs on the worker pool, in the shipped layout too (probes on a metrics port of their
 * own, one event loop for the verbs): while a plan is under way, a pod of no job is answered; before, with such a port,
 * every filter was answered on the event loop, and one job's plan held every other pod's filter back for its length.
 */
class PlanOffEventLoopTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final String RACK = "topology.hetgpu.io/rack";
    private final Vertx vertx = Vertx.vertx();
    private final HttpClient http = HttpClient.newHttpClient();
    private final CountDownLatch planning = new CountDownLatch(1);
    private final CountDownLatch goOn = new CountDownLatch(1);
    private ExtenderServer server;

    @AfterEach
    void stop() throws Exception {
        goOn.countDown();
        if (server != null) {
            server.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        http.close();
    }

    private static Node node(String name) {
        var topology = TestTopologies.dgxA100(name);
        return new NodeBuilder().withNewMetadata().withName(name).withLabels(Map.of(RACK, "r1"))
                .withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, TestTopologies.inventory(topology),
                        HetgpuKeys.ANNOTATION_FREE, TestTopologies.allFree(topology)))
                .endMetadata().build();
    }

    private static Pod pod(String name, String job, int size) {
        var metadata = new PodBuilder().withNewMetadata().withName(name).withNamespace("ml").withUid(name + "-uid")
                .withCreationTimestamp("2026-11-28T00:00:00Z");
        if (!job.isEmpty()) {
            metadata = metadata.withLabels(Map.of(HetgpuKeys.POD_JOB, job)).withAnnotations(Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(size)));
        }
        return metadata.endMetadata().withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity("2"))).endResources().endContainer().endSpec().build();
    }

    private CompletableFuture<HttpResponse<String>> filter(Pod pod, List<String> nodes) throws Exception {
        var body = "{\"Pod\":" + KubeJson.MAPPER.writeValueAsString(pod) + ",\"NodeNames\":" + KubeJson.MAPPER.writeValueAsString(nodes) + "}";
        var request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/filter"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aPodOfNoJobIsAnsweredWhileAJobIsPlanned() throws Exception {
        var nodes = List.of(node("n1"), node("n2"));
        var job = IntStream.range(0, 4).mapToObj(i -> pod("resnet-" + i, "resnet", 4)).toList();
        var parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
        var view = new PausingView(new ListedClusterView(nodes, job, List.of(), List.of(), parser, RACK, TestTrust.trust()));
        var verbs = ExtenderVerbs.of(view, parser, new NodeStateFactory(CATALOG, RACK, "nvidia.com/gpu"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
        // As shipped: one event loop for the verbs, the probes and metrics on a port of their own.
        var options = new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null, 64L * 1024 * 1024, ServerOptions.DEFAULT_READ_TIMEOUT,
                ServerOptions.DEFAULT_IDLE_TIMEOUT, 1).withMetrics("127.0.0.1", 0);
        server = ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics()).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        var names = List.of("n1", "n2");

        var planned = filter(job.getFirst(), names);
        assertThat(planning.await(30, TimeUnit.SECONDS)).as("the plan began").isTrue();

        var alone = filter(pod("serving", "", 1), names);
        await().atMost(Duration.ofSeconds(30)).until(alone::isDone);
        assertThat(alone.get().statusCode()).isEqualTo(200);
        assertThat(alone.get().body()).contains("\"NodeNames\":[\"n1\",\"n2\"]");
        assertThat(planned).as("the plan still under way").isNotDone();

        goOn.countDown();
        var answer = planned.get(30, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.body()).contains("\"NodeNames\":[\"n");
        assertThat(verbs.service().jobs().holds().planOf("ml/resnet")).isNotNull();
    }

    /** A view whose contexts, read only when a job is planned, wait until the test lets them go. */
    private final class PausingView extends ForwardingClusterView {

        PausingView(ClusterView view) {
            super(view);
        }

        @Override
        public PlacementContext contextOf(PodRequest pod) {
            planning.countDown();
            try {
                if (!goOn.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the plan go on");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            return super.contextOf(pod);
        }
    }
}
