package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.api.ApiServer;
import java.io.IOException;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped extender jar's {@code /bind} as anyone who reaches its port can call it (the port checks no caller): it
 * binds only a pod of its scheduler, named with its UID, onto a node the cluster has; anything else is an {@code Error}
 * and leaves the pod as it was.
 */
class ShippedExtenderBindTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private ApiServer api;
    private KubernetesClient client;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeEach
    void startCluster() {
        api = ApiServer.start();
        client = api.newClient();
        var resources = Map.of("cpu", new Quantity("64"), "memory", new Quantity("512Gi"), "pods", new Quantity("110"));
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata()
                .withNewStatus().addToCapacity(resources).addToAllocatable(resources).endStatus().build()).create();
    }

    @AfterEach
    void stopCluster() {
        client.close();
        api.close();
    }

    @Test
    void theExtenderJarBindsOnlyItsSchedulersPodsByUidOntoNodesThatExist() throws Exception {
        int port;
        try (var socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        var config = Files.writeString(dir.resolve("extender.yaml"), "version: v1\nport: " + port + "\n");
        var kubeconfig = api.writeKubeconfig(dir.resolve("kubeconfig"));
        var system = create("kube-system", "coredns", "default-scheduler");
        var train = create("default", "train", "hetgpu-scheduler");
        var jar = ShippedArtifacts.SCHEDULER_EXTENDER;
        try (var extender = JarProcess.start(jar.jar(), jar.dockerJvmOptions(),
                List.of("--config", config.toString(), "--kubeconfig", kubeconfig.toString()), Map.of("HOME", dir.toString()),
                dir.resolve("extender.log"))) {
            var base = "http://127.0.0.1:" + port;
            await("the extender's informers sync").atMost(START).ignoreExceptions()
                    .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                        assertThat(get(base + "/readyz").statusCode()).as(extender::describe).isEqualTo(200);
                    });

            assertThat(bind(base, system, system.getMetadata().getUid(), "cpu-1"))
                    .contains("spec.schedulerName \"default-scheduler\"").contains("not this extender's to bind");
            assertThat(bind(base, train, train.getMetadata().getUid(), "no-such-node")).startsWith("node no-such-node ");
            assertThat(bind(base, train, "uid-of-another-pod", "cpu-1")).contains("is now UID " + train.getMetadata().getUid() + ", not uid-of-another-pod");
            assertThat(bind(base, train, "", "cpu-1")).isEqualTo("ExtenderBindingArgs.PodUID is empty: nothing to bind");
            for (var pod : List.of(system, train)) {
                var now = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).get();
                assertThat(now.getSpec().getNodeName()).as("%s not bound", pod.getMetadata().getName()).isNull();
                assertThat(now.getMetadata().getAnnotations()).as("%s unchanged", pod.getMetadata().getName())
                        .doesNotContainKey(HetgpuKeys.POD_GPU_DEVICES);
                assertThat(now.getMetadata().getResourceVersion()).isEqualTo(pod.getMetadata().getResourceVersion());
            }

            // What kube-scheduler sends for its own pod is bound: the refusals above are the checks, not a broken bind.
            assertThat(bind(base, train, train.getMetadata().getUid(), "cpu-1")).isEmpty();
            assertThat(client.pods().inNamespace("default").withName("train").get().getSpec().getNodeName()).isEqualTo("cpu-1");
        }
    }

    private Pod create(String namespace, String name, String schedulerName) {
        return client.pods().inNamespace(namespace).resource(new PodBuilder().withNewMetadata().withName(name).withNamespace(namespace)
                .withUid("uid-" + name).endMetadata().withNewSpec().withSchedulerName(schedulerName)
                .addNewContainer().withName("main").withImage("busybox").endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build()).create();
    }

    /** The bind kube-scheduler's binder would send, from a caller that made it up. */
    private String bind(String base, Pod pod, String uid, String node) throws IOException, InterruptedException {
        var body = JSON.writeValueAsString(Map.of("PodName", pod.getMetadata().getName(), "PodNamespace", pod.getMetadata().getNamespace(),
                "PodUID", uid, "Node", node));
        var response = http.send(HttpRequest.newBuilder(URI.create(base + "/bind")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body()).path("Error").asText("");
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
