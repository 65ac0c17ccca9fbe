package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.api.ApiServer.Interference;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The extender started while the API server refuses it with 403 (its ClusterRoleBinding not applied yet, as happens when
 * an install's objects arrive in any order): it waits, unready and saying why, and is ready within seconds once allowed.
 */
class ApiServerRefusedAtStartTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(90);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void refusedWith403AtStartThenAllowedTheExtenderBecomesReady() throws Exception {
        try (var api = ApiServer.start(); var admin = api.newClient(); var client = api.newClient()) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata().build()).create();
            var refusedNodeLists = new AtomicInteger();
            api.interfere(request -> {
                if (request.path().startsWith("/api/v1/nodes") && !request.watch()) {
                    refusedNodeLists.incrementAndGet();
                }
                return new Interference.Refused(403);
            });
            var config = ExtenderConfig.DEFAULTS;
            try (var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null),
                    Optional.of(client))) {
                var base = "http://127.0.0.1:" + extender.port();
                await("several refused lists").atMost(WAIT).until(() -> refusedNodeLists.get() >= 3);
                var ready = get(base + "/readyz");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).startsWith("the extender is waiting for its caches").contains("403");
                assertThat(get(base + "/healthz").statusCode()).isEqualTo(200);
                assertThat(filter(base).get("Error").asText()).startsWith("the extender is waiting for its caches");

                api.interfere(request -> Interference.NONE);
                await("ready once allowed").atMost(WAIT).ignoreExceptions()
                        .untilAsserted(() -> assertThat(get(base + "/readyz").statusCode()).isEqualTo(200));
                assertThat(extender.synced()).isCompleted();
                var answer = filter(base);
                assertThat(answer.get("Error").asText()).as(answer::toString).isEmpty();
                assertThat(answer.get("NodeNames").get(0).asText()).isEqualTo("cpu-1");
            }
        }
    }

    private JsonNode filter(String base) throws IOException, InterruptedException {
        var body = """
                {"Pod": {"metadata": {"name": "serving", "namespace": "default", "uid": "uid-serving"},
                         "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}]}},
                 "NodeNames": ["cpu-1"]}""";
        var response = http.send(HttpRequest.newBuilder(URI.create(base + "/filter")).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
