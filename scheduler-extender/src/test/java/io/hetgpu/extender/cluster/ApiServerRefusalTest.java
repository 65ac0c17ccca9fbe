package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.tier.CardCatalog;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An API server that refuses the extender's lists with 403 when it starts (its RBAC not yet in effect): the informers
 * keep trying, say why while they wait, and sync once it answers. fabric8's own handler gave up on the first failed list,
 * leaving the extender unready for good.
 */
class ApiServerRefusalTest {

    private final AtomicBoolean refusing = new AtomicBoolean(true);
    private final AtomicInteger refusedNodeLists = new AtomicInteger();
    private KubernetesMockServer server;
    private KubernetesClient client;
    private InformerClusterView view;

    @BeforeEach
    void start() {
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if (refusing.get() && "GET".equals(request.getMethod())) {
                    if (request.getPath().startsWith("/api/v1/nodes")) {
                        refusedNodeLists.incrementAndGet();
                    }
                    return new MockResponse().setResponseCode(403).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                            + "\"status\":\"Failure\",\"message\":\"nodes is forbidden\",\"reason\":\"Forbidden\",\"code\":403}");
                }
                return super.dispatch(request);
            }
        };
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata().build()).create();
    }

    @AfterEach
    void stop() {
        if (view != null) {
            view.close();
        }
        client.close();
        server.destroy();
    }

    private InformerClusterView view(io.fabric8.kubernetes.client.informers.ExceptionHandler retry) {
        return new InformerClusterView(client, new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()), "rack", io.hetgpu.extender.TestTrust.trust(), retry);
    }

    @Test
    void refusedAtStartTheInformersRetryAndSyncOnceAllowed() {
        view = new InformerClusterView(client, new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()), "rack", io.hetgpu.extender.TestTrust.trust());
        var synced = view.start();

        await("several refused lists").atMost(Duration.ofSeconds(60)).until(() -> refusedNodeLists.get() >= 3);
        assertThat(view.synced()).isFalse();
        assertThat(view.unsynced()).hasValueSatisfying(reason -> assertThat(reason)
                .startsWith(ClusterView.WAITING).contains("nodes", "403", "nodes is forbidden"));
        assertThat(view.stopped()).as("refused is waiting, not wedged").isEmpty();
        assertThat(synced).isNotDone();

        refusing.set(false);
        await("synced once the API server answers").atMost(Duration.ofSeconds(60)).until(view::synced);
        assertThat(synced).succeedsWithin(Duration.ofSeconds(10));
        assertThat(view.unsynced()).isEmpty();
        assertThat(view.node("cpu-1")).isNotNull();
    }

    @Test
    void anInformerThatGivesUpIsReportedAsStoppedForGood() {
        // fabric8's own handler: no retry of a first list that failed. The view must say so rather than wait for ever.
        view = view(InformerClusterView.FABRIC8_DEFAULT);
        var synced = view.start();

        await("the informers stop").atMost(Duration.ofSeconds(60)).until(() -> view.stopped().isPresent());
        assertThat(view.stopped().orElseThrow()).contains("informer has stopped for good", "403");
        assertThat(view.unsynced()).as("not ready either").isPresent();
        await("the start fails").atMost(Duration.ofSeconds(60)).until(synced::isCompletedExceptionally);

        refusing.set(false);
        assertThat(view.stopped()).as("it does not come back by itself").isPresent();
    }
}
