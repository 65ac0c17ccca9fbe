package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.hetgpu.testcluster.api.ApiServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped extender jar started while its API server is down (a control plane restarting, a node booting before it can
 * reach it): it waits, unready and refusing every verb with the reason, yet alive, and once the API server answers it
 * syncs and serves. Before, its informers gave up on the first failed list and it stayed unready until someone restarted it.
 */
class ShippedExtenderApiOutageTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String CPU_POD = """
            {"metadata": {"name": "serving", "namespace": "default", "uid": "uid-serving"},
             "spec": {"schedulerName": "hetgpu-scheduler", "containers": [{"name": "main", "image": "busybox",
               "resources": {"requests": {"cpu": "2"}}}]}}""";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void startedWhileTheApiServerIsDownItBecomesReadyOnceItAnswers() throws Exception {
        int apiPort = freePort();
        int port = freePort();
        var kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: test, cluster: {server: "http://127.0.0.1:%d"}}]
                contexts: [{name: test, context: {cluster: test, user: test, namespace: default}}]
                current-context: test
                users: [{name: test, user: {}}]
                """.formatted(apiPort));
        var base = "http://127.0.0.1:" + port;
        try (var extender = JarProcess.start(SCHEDULER_EXTENDER.jar(), SCHEDULER_EXTENDER.dockerJvmOptions(),
                List.of("--port=" + port, "--kubeconfig=" + kubeconfig), Map.of("HOME", dir.toString()), dir.resolve("extender.log"))) {
            await("listening, unready, refusing").atMost(WAIT).ignoreExceptions()
                    .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                        var ready = get(base + "/readyz");
                        assertThat(ready.statusCode()).isEqualTo(503);
                        assertThat(ready.body()).startsWith("the extender is waiting for its caches");
                    });
            assertThat(get(base + "/healthz").statusCode()).as("waiting for an API server is no reason to restart").isEqualTo(200);
            assertThat(filter(base).get("Error").asText()).startsWith("the extender is waiting for its caches");

            // Past fabric8's own retries of the request (about 20 s of connection attempts): the informer itself has
            // failed its first list, which is where it used to give up.
            await("a first list failed and is retried").atMost(WAIT)
                    .until(() -> extender.output().contains("listing nodes from the API server failed, retrying with backoff"));

            try (var api = ApiServer.start(apiPort); var client = api.newClient()) {
                client.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata().build()).create();
                await("ready once the API server answers").atMost(WAIT).ignoreExceptions()
                        .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                            assertThat(get(base + "/readyz").statusCode()).as(extender::describe).isEqualTo(200);
                        });
                var answer = filter(base);
                assertThat(answer.get("Error").asText()).as(answer::toString).isEmpty();
                assertThat(answer.get("NodeNames")).as(answer::toString).hasSize(1);
                assertThat(answer.get("NodeNames").get(0).asText()).as(answer::toString).isEqualTo("cpu-1");
                assertThat(extender.output()).as("each failure in one line, no stack traces")
                        .doesNotContain("\tat io.").doesNotContain("will stop");
                assertThat(extender.stop()).as(extender::describe).isIn(0, 143);
            }
        }
    }

    private static int freePort() throws IOException {
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private JsonNode filter(String base) throws IOException, InterruptedException {
        var body = "{\"Pod\":" + CPU_POD + ",\"NodeNames\":[\"cpu-1\"]}";
        var response = http.send(HttpRequest.newBuilder(URI.create(base + "/filter")).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
