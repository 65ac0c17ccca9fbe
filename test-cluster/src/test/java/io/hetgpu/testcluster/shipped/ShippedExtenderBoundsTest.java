package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.testcluster.manifests.RenderedManifests;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped extender jar, as the Deployment runs it but for its heap, answers a pod it cannot read once: a
 * 250 KB invalid {@code hetgpu.io/priority}, asked about 5,000 nodes, gets a short answer naming the annotation,
 * again and again, in a JVM whose heap is a tenth of the Deployment's. Quoted once per node, as it once was, that
 * answer was 1.25 GB and the extender died of an OutOfMemoryError at the Deployment's own heap.
 *
 * <p>The extender runs with {@code --kubeconfig=none} and is sent whole Nodes (kube-scheduler's form without
 * {@code nodeCacheCapable}): with no API server to hold 5,000 Node objects, the request carries them. They are
 * small (a name and an allocatable count: the pod is refused before a node's GPUs matter), so the request is about
 * 1.3 MB, a fifth of it the annotation.
 */
class ShippedExtenderBoundsTest {

    private static final int NODES = 5_000;
    private static final int ASKED = 20;
    /** A tenth of the Deployment's 921 MiB heap: a 1.25 GB answer cannot be built in it, a short one is. */
    private static final String HEAP = "-Xmx96m";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aHugeInvalidAnnotationAt5000NodesIsAnsweredOnceInUnderAMegabyteWithoutTheHeapGrowing() throws Exception {
        var pod = PodSandbox.of(RenderedManifests.simulatedInstall(), "Deployment", "hetgpu-scheduler", "scheduler-extender", "cpu-1",
                dir.resolve("extender-pod"), Map.of());
        var args = new ArrayList<String>();
        for (var arg : pod.args()) {
            args.add(arg.startsWith("--kubeconfig") ? "--kubeconfig=none" : arg);
        }
        var env = new LinkedHashMap<>(pod.env());
        env.put("HOME", dir.toString());
        var options = new ArrayList<>(SCHEDULER_EXTENDER.dockerJvmOptions());
        options.add(HEAP);
        options.add("-XX:+ExitOnOutOfMemoryError");
        var http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        var base = "http://127.0.0.1:" + pod.flagPort("--port");
        var body = request();
        assertThat(body.length()).as("the request").isBetween(1_000_000, 1_500_000);
        try (var extender = JarProcess.start(SCHEDULER_EXTENDER.jar(), options, args, env, dir.resolve("extender.log"))) {
            await("the extender answers /readyz").atMost(Duration.ofSeconds(60)).ignoreExceptions()
                    .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                        var ready = http.send(HttpRequest.newBuilder(URI.create(base + "/readyz")).timeout(Duration.ofSeconds(5)).GET().build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertThat(ready.statusCode()).isEqualTo(200);
                    });
            for (int i = 0; i < ASKED; i++) {
                var response = http.send(HttpRequest.newBuilder(URI.create(base + "/filter")).timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                assertThat(response.statusCode()).as(extender::describe).isEqualTo(200);
                assertThat(response.body().length).as("the answer's bytes").isLessThan(1_000_000);
                var answer = JSON.readTree(response.body());
                assertThat(answer.get("Error").asText()).isEmpty();
                assertThat(answer.get("Nodes").get("items")).isEmpty();
                var unresolvable = answer.get("FailedAndUnresolvableNodes");
                assertThat(unresolvable.size()).as("the pod's reason once, not once per node").isEqualTo(1);
                assertThat(unresolvable.get("node-0").asText()).startsWith("pod default/huge-annotation cannot be placed: "
                        + "hetgpu.io/priority: expected one of high, normal, low, got \"" + "x".repeat(64) + "…\"(250000 bytes)");
                if (i == 0) {
                    System.out.printf("5,000 nodes, a 250 KB annotation: request %d bytes, answer %d bytes%n", body.length(),
                            response.body().length);
                }
            }
            assertThat(extender.isAlive()).as("alive after %d such requests in %s: %s", ASKED, HEAP, extender.describe()).isTrue();
            assertThat(extender.output()).doesNotContain("java.lang.OutOfMemoryError");
            assertThat(extender.stop()).as(extender::describe).isIn(0, 143);
        }
    }

    /** A GPU pod with a 250 KB invalid priority hint, and 5,000 small whole Nodes. */
    private static String request() throws Exception {
        var pod = """
                {"metadata": {"name": "huge-annotation", "namespace": "default", "uid": "uid-huge",
                  "annotations": {"hetgpu.io/priority": "%s"}},
                 "spec": {"schedulerName": "hetgpu-scheduler", "containers": [{"name": "main", "image": "busybox",
                  "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}]}}"""
                .formatted("x".repeat(250_000));
        var items = new ArrayList<String>(NODES);
        for (int i = 0; i < NODES; i++) {
            items.add("""
                    {"metadata": {"name": "node-%d", "resourceVersion": "1", "labels": {"kubernetes.io/hostname": "node-%d"}},
                     "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "64", "memory": "512Gi", "pods": "110"}}}"""
                    .formatted(i, i));
        }
        return "{\"Pod\":" + pod + ",\"Nodes\":{\"items\":[" + String.join(",", items) + "]},\"NodeNames\":null}";
    }

}
