package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.kubelet.KubeletFolders;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import io.hetgpu.testcluster.manifests.RenderedManifests;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two jars that ship, each in its own JVM ({@code java -jar}), with the JVM options of its
 * Dockerfile and the arguments, environment and mounted files its workload gets from the install
 * as {@code kubectl kustomize} renders it, against the test cluster's API server: they become ready and do their job. This is the
 * test that the classpath of the other tests cannot stand in for (a jar that lacked a class fabric8
 * needs at run time crashed against every API server while every other test passed).
 *
 * <p>What differs from a pod, and why: the volumes are folders under a temporary root (host paths
 * are the simulated node's kubelet folders), the container ports are free loopback ports, the device
 * plugin is the simulated overlay's DaemonSet (no GPU here), and the API server is reached through
 * fabric8's {@code KUBERNETES_MASTER} instead of the service account's host, port, token and CA
 * (the in-process API server speaks plain HTTP and checks no token). The programs' own code paths,
 * {@code --kubeconfig in-cluster} included, are the shipped ones.
 */
class ShippedJarsTest {

    private static final String GPU_NODE = "gpu-a100";
    private static final String CPU_NODE = "cpu-1";
    private static final String SIMULATED_PLUGIN = "hetgpu-device-plugin-sim-dgx-a100";
    private static final Duration START = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private ApiServer api;
    private KubernetesClient client;
    private SimulatedKubelet kubelet;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<HasMetadata> manifests = RenderedManifests.simulatedInstall();

    @BeforeEach
    void startCluster() throws IOException {
        api = ApiServer.start();
        client = api.newClient();
        client.nodes().resource(node(GPU_NODE, Map.of(HetgpuKeys.LABEL_RACK, "rack-a", "hetgpu.io/gpu-node", "true",
                "hetgpu.io/simulated-profile", "dgx-a100"))).create();
        client.nodes().resource(node(CPU_NODE, Map.of(HetgpuKeys.LABEL_RACK, "rack-a"))).create();
        kubelet = new SimulatedKubelet(GPU_NODE, HetgpuKeys.DEFAULT_RESOURCE_NAME, KubeletFolders.under(dir.resolve("node")), client).start();
    }

    @AfterEach
    void stopCluster() throws InterruptedException {
        kubelet.close();
        client.close();
        api.close();
    }

    @Test
    void theDevicePluginJarRegistersWithKubeletAndPublishesItsNode() throws Exception {
        var pod = pluginPod();
        try (var plugin = start(DEVICE_PLUGIN, pod, "device-plugin.log")) {
            await("the device plugin registers with kubelet and writes its Node").atMost(START).untilAsserted(() -> {
                assertThat(plugin.isAlive()).as(plugin::describe).isTrue();
                assertThat(kubelet.registrations()).as(plugin::describe).isNotEmpty();
                var node = client.nodes().withName(GPU_NODE).get();
                assertThat(node.getMetadata().getLabels()).as(plugin::describe)
                        .containsEntry(HetgpuKeys.LABEL_GPU_MODEL, "A100")
                        .containsEntry(HetgpuKeys.LABEL_GPU_COUNT, "8");
                assertThat(node.getMetadata().getAnnotations()).containsKeys(HetgpuKeys.ANNOTATION_INVENTORY, HetgpuKeys.ANNOTATION_FREE);
                assertThat(node.getStatus().getAllocatable()).containsEntry(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("8"));
            });
            var inventory = new InventoryCodec().decode(
                    client.nodes().withName(GPU_NODE).get().getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_INVENTORY));
            assertThat(inventory.devices()).hasSize(8);

            // The liveness probe's path and the metrics the README tells admins to scrape, on the container's port.
            var status = "http://127.0.0.1:" + pod.port("http");
            assertThat(get(status + "/healthz").statusCode()).isEqualTo(200);
            assertThat(get(status + "/metrics").body()).contains("hetgpu_device_plugin_devices", "hetgpu_device_plugin_registrations_total");

            assertThat(plugin.output()).as("start-up log").doesNotContain("sun.misc.Unsafe").doesNotContain("Exception");
            plugin.stop();
            assertThat(plugin.output()).contains("Stopping (signal received)");
        }
    }

    @Test
    void theExtenderJarSyncsFromTheApiServerAndAnswersNodeNamesFromItsInformers() throws Exception {
        // The GPU node as the device plugin leaves it: hetgpu's labels and inventory, GPUs allocatable.
        var pluginPod = pluginPod();
        // The extender container of hetgpu-scheduler's pod: kube-scheduler beside it calls its verbs on loopback.
        var pod = PodSandbox.of(manifests, "Deployment", "hetgpu-scheduler", "scheduler-extender", CPU_NODE, dir.resolve("extender-pod"),
                Map.of());
        assertThat(pod.args()).as("the Deployment's flags").contains("--kubeconfig=in-cluster", "--host=127.0.0.1");
        try (var plugin = start(DEVICE_PLUGIN, pluginPod, "device-plugin.log");
             var extender = start(SCHEDULER_EXTENDER, pod, "extender.log")) {
            var base = "http://127.0.0.1:" + pod.flagPort("--port");
            var probes = "http://127.0.0.1:" + pod.port("metrics");
            await("the extender's informers sync (readinessProbe /readyz on the metrics port)").atMost(START).ignoreExceptions()
                    .untilAsserted(() -> {
                        assertThat(extender.isAlive()).as(extender::describe).isTrue();
                        assertThat(get(probes + "/readyz").statusCode()).as(extender::describe).isEqualTo(200);
                    });
            await("the GPU node's inventory reaches the extender").atMost(START).untilAsserted(() -> {
                assertThat(plugin.isAlive()).as(plugin::describe).isTrue();
                var filter = post(base + "/filter", gpuPod(2), List.of(GPU_NODE, CPU_NODE));
                assertThat(names(filter.get("NodeNames"))).as(filter::toString).containsExactly(GPU_NODE);
                // No GPUs at all: no eviction could help, so kube-scheduler must not try preemption there.
                assertThat(filter.get("FailedAndUnresolvableNodes").has(CPU_NODE)).as(filter::toString).isTrue();
            });

            // A CPU-only pod: the extender scores the CPU node above the GPU node (kube-scheduler's nodeCacheCapable form).
            var scores = post(base + "/prioritize", cpuPod(), List.of(GPU_NODE, CPU_NODE));
            var byHost = new LinkedHashMap<String, Integer>();
            scores.forEach(score -> byHost.put(score.get("Host").asText(), score.get("Score").asInt()));
            assertThat(byHost.get(CPU_NODE)).as(scores::toString).isGreaterThan(byHost.get(GPU_NODE));

            assertThat(extender.output()).as("start-up log").doesNotContain("sun.misc.Unsafe").doesNotContain("Exception");
            assertThat(extender.stop()).as(extender::describe).isIn(0, 143);
        }
    }

    /** The simulated DGX A100's device plugin pod, its host paths the simulated kubelet's folders. */
    private PodSandbox pluginPod() {
        var folders = kubelet.folders();
        return PodSandbox.of(manifests, "DaemonSet", SIMULATED_PLUGIN, GPU_NODE, dir.resolve("plugin-pod"), Map.of(
                "/var/lib/kubelet/device-plugins", folders.devicePlugins(),
                "/var/lib/kubelet/pod-resources", folders.podResourcesSocket().getParent()));
    }

    private JarProcess start(ShippedArtifacts program, PodSandbox pod, String log) {
        var env = new LinkedHashMap<>(pod.env());
        env.put("HOME", dir.toString());
        env.put("KUBERNETES_MASTER", api.url());
        env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
        env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
        return JarProcess.start(program.jar(), program.dockerJvmOptions(), pod.args(), env, dir.resolve(log));
    }

    private static Node node(String name, Map<String, String> labels) {
        var resources = Map.of("cpu", new Quantity("64"), "memory", new Quantity("512Gi"), "pods", new Quantity("110"));
        return new NodeBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name).addToLabels(labels).endMetadata()
                .withNewStatus().addToCapacity(resources).addToAllocatable(resources)
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    }

    private static String gpuPod(int gpus) {
        return pod("trainer", """
                "resources": {"limits": {"nvidia.com/gpu": "%d"}, "requests": {"nvidia.com/gpu": "%d"}}""".formatted(gpus, gpus));
    }

    private static String cpuPod() {
        return pod("serving", """
                "resources": {"requests": {"cpu": "2"}}""");
    }

    private static String pod(String name, String resources) {
        return """
                {"metadata": {"name": "%s", "namespace": "default", "uid": "uid-%s"},
                 "spec": {"schedulerName": "hetgpu-scheduler", "containers": [{"name": "main", "image": "busybox", %s}]}}"""
                .formatted(name, name, resources);
    }

    private JsonNode post(String url, String pod, List<String> nodeNames) throws IOException, InterruptedException {
        var body = "{\"Pod\":" + pod + ",\"NodeNames\":" + JSON.writeValueAsString(nodeNames) + "}";
        var response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> names(JsonNode array) {
        return array == null || array.isNull() ? List.of() : JSON.convertValue(array, JSON.getTypeFactory().constructCollectionType(List.class, String.class));
    }
}
