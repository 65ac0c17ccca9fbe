package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ListingClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP front of an extender whose caches have not synced, or whose informer has stopped: what kube-scheduler and the
 * kubelet's probes read.
 */
class NotSyncedServerTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String NAMES = "{\"Pod\":" + POD + ",\"NodeNames\":[\"dgx-1\"]}";

    /** Not synced; and, when {@code stoppedBecause} is set, an informer stopped for good. */
    private final ListingClusterView cluster = new ListingClusterView(NodeSnapshot.EMPTY);
    private Vertx vertx;
    private ExtenderServer server;
    private WebClient client;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        var catalog = CardCatalog.defaults();
        var verbs = ExtenderVerbs.of(cluster, new PodRequestParser("nvidia.com/gpu", catalog), new NodeStateFactory(catalog, "rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
        var metrics = new ExtenderMetrics();
        metrics.watchGate(verbs.gate());
        server = join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null), verbs, metrics));
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() {
        server.close();
        join(vertx.close());
    }

    @Test
    void notReadyAndEveryVerbRefusesSayingItWaitsForItsCaches() throws Exception {
        var ready = get("/readyz");
        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(ready.bodyAsString()).startsWith(ClusterView.WAITING);
        assertThat(get("/healthz").statusCode()).as("waiting is not wedged: no restart").isEqualTo(200);

        // Filter and bind have an Error field, which kube-scheduler reads from a 200 and shows in the pod's events.
        var filter = post("/filter", NAMES);
        assertThat(filter.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(filter.bodyAsString()).get("Error").asText()).startsWith(ClusterView.WAITING);
        var bind = post("/bind", "{\"PodName\":\"w0\",\"PodNamespace\":\"ml\",\"PodUID\":\"u0\",\"Node\":\"dgx-1\"}");
        assertThat(bind.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(bind.bodyAsString()).get("Error").asText()).startsWith(ClusterView.WAITING);
        // Prioritize and preempt answers have none: an HTTP error is how kube-scheduler hears that the call failed.
        for (var path : new String[] {"/prioritize", "/preempt"}) {
            var body = path.equals("/preempt") ? "{\"Pod\":" + POD + ",\"NodeNameToMetaVictims\":{\"dgx-1\":{\"Pods\":[{\"UID\":\"v\"}]}}}" : NAMES;
            var answer = post(path, body);
            assertThat(answer.statusCode()).as(path).isEqualTo(503);
            assertThat(JSON.readTree(answer.bodyAsString()).get("Error").asText()).as(path).startsWith(ClusterView.WAITING);
        }

        var metrics = get("/metrics").bodyAsString();
        for (var verb : new String[] {"filter", "prioritize", "preempt", "bind"}) {
            assertThat(metrics).contains("hetgpu_extender_not_synced_refusals_total{verb=\"" + verb + "\"} 1.0");
        }
    }

    @Test
    void anInformerStoppedForGoodFailsTheLivenessProbe() {
        cluster.stop("the pods informer has stopped for good (watch closed)");

        var health = get("/healthz");
        assertThat(health.statusCode()).isEqualTo(503);
        assertThat(health.bodyAsString()).isEqualTo("the pods informer has stopped for good (watch closed)");
    }

    private HttpResponse<Buffer> get(String path) {
        return join(client.get(server.port(), "127.0.0.1", path).send());
    }

    private HttpResponse<Buffer> post(String path, String body) {
        return join(client.post(server.port(), "127.0.0.1", path).sendBuffer(Buffer.buffer(body)));
    }

    private static <T> T join(Future<T> future) {
        return future.toCompletionStage().toCompletableFuture().join();
    }
}
