package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
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
import java.util.function.UnaryOperator;

/**
 * A cluster for the shipped jars: the in-process API server with a GPU node (a simulated DGX A100 with its simulated
 * kubelet) and a CPU node, on which each jar is started as the simulated install's workload starts it (its arguments,
 * environment and mounted files from {@code kubectl kustomize}), with the JVM options of its Dockerfile.
 */
final class ShippedCluster implements AutoCloseable {

    static final String GPU_NODE = "gpu-a100";
    static final String CPU_NODE = "cpu-1";
    static final String SIMULATED_PLUGIN = "hetgpu-device-plugin-sim-dgx-a100";
    private static final ObjectMapper JSON = new ObjectMapper();

    final ApiServer api;
    final KubernetesClient client;
    final SimulatedKubelet kubelet;
    final List<HasMetadata> manifests = RenderedManifests.simulatedInstall();
    private final Path dir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ShippedCluster(Path dir, ApiServer api) throws IOException {
        this.dir = dir;
        this.api = api;
        this.client = api.newClient();
        client.nodes().resource(node(GPU_NODE, Map.of(HetgpuKeys.LABEL_RACK, "rack-a", "hetgpu.io/gpu-node", "true",
                "hetgpu.io/simulated-profile", "dgx-a100"))).create();
        client.nodes().resource(node(CPU_NODE, Map.of(HetgpuKeys.LABEL_RACK, "rack-a"))).create();
        this.kubelet = new SimulatedKubelet(GPU_NODE, HetgpuKeys.DEFAULT_RESOURCE_NAME, KubeletFolders.under(dir.resolve("node")), client).start();
    }

    static ShippedCluster start(Path dir) throws IOException {
        return new ShippedCluster(dir, ApiServer.start());
    }

    /** The simulated DGX A100's device plugin pod, its host paths the simulated kubelet's folders. */
    PodSandbox pluginPod() {
        var folders = kubelet.folders();
        return PodSandbox.of(manifests, "DaemonSet", SIMULATED_PLUGIN, GPU_NODE, dir.resolve("plugin-pod"), Map.of(
                "/var/lib/kubelet/device-plugins", folders.devicePlugins(),
                "/var/lib/kubelet/pod-resources", folders.podResourcesSocket().getParent()));
    }

    /** The device plugin pod of a real GPU node (the base DaemonSet, NVML), its host paths the simulated kubelet's folders. */
    PodSandbox nvmlPluginPod() {
        var folders = kubelet.folders();
        return PodSandbox.of(RenderedManifests.install(), "DaemonSet", "hetgpu-device-plugin", GPU_NODE, dir.resolve("nvml-plugin-pod"), Map.of(
                "/var/lib/kubelet/device-plugins", folders.devicePlugins(),
                "/var/lib/kubelet/pod-resources", folders.podResourcesSocket().getParent()));
    }

    /**
     * The node agent as {@code manifests/overlays/dra} runs it (hetgpu's DRA driver), its host paths the simulated kubelet's
     * DRA folders: the plugin registry, kubelet's plugins folder and the container runtime's CDI folder.
     */
    PodSandbox draPluginPod() {
        var folders = kubelet.folders();
        return PodSandbox.of(RenderedManifests.draInstall(), "DaemonSet", "hetgpu-device-plugin", GPU_NODE, dir.resolve("dra-plugin-pod"),
                Map.of("/var/lib/kubelet/plugins_registry", folders.pluginsRegistry(), "/var/lib/kubelet/plugins", folders.plugins(),
                        "/var/run/cdi", folders.cdi()));
    }

    /** The extender container of hetgpu-scheduler's pod: kube-scheduler beside it calls its verbs on loopback. */
    PodSandbox extenderPod() {
        return PodSandbox.of(manifests, "Deployment", "hetgpu-scheduler", "scheduler-extender", CPU_NODE, dir.resolve("extender-pod"),
                Map.of());
    }

    /**
     * The jar with its pod's arguments and environment; the API server is reached through fabric8's
     * {@code KUBERNETES_MASTER} instead of the service account's host, port, token and CA (it speaks plain HTTP).
     */
    JarProcess start(ShippedArtifacts program, PodSandbox pod, String log) {
        return start(program, pod, log, Map.of());
    }

    /** As {@link #start(ShippedArtifacts, PodSandbox, String)}, with what the container runtime adds to the environment. */
    JarProcess start(ShippedArtifacts program, PodSandbox pod, String log, Map<String, String> runtimeEnv) {
        return launch(program, pod, log, runtimeEnv, UnaryOperator.identity());
    }

    /**
     * As {@link #start(ShippedArtifacts, PodSandbox, String)}, with the pod's arguments as {@code args} rewrites them (a
     * test that must stand in for what this machine lacks, and says so).
     */
    JarProcess start(ShippedArtifacts program, PodSandbox pod, String log, UnaryOperator<List<String>> args) {
        return launch(program, pod, log, Map.of(), args);
    }

    private JarProcess launch(ShippedArtifacts program, PodSandbox pod, String log, Map<String, String> runtimeEnv,
            UnaryOperator<List<String>> args) {
        var env = new LinkedHashMap<>(pod.env());
        env.putAll(runtimeEnv);
        env.put("HOME", dir.toString());
        env.put("KUBERNETES_MASTER", api.url());
        env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
        env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
        return JarProcess.start(program.jar(), pod.jvmOptions(program.dockerJvmOptions()), args.apply(pod.args()), env, dir.resolve(log));
    }

    HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** POSTs a JSON body as kube-scheduler does and returns the answer, which must be a 200. */
    JsonNode post(String url, String body) throws IOException, InterruptedException {
        var response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private static Node node(String name, Map<String, String> labels) {
        var resources = Map.of("cpu", new Quantity("64"), "memory", new Quantity("512Gi"), "pods", new Quantity("110"));
        return new NodeBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name).addToLabels(labels).endMetadata()
                .withNewStatus().addToCapacity(resources).addToAllocatable(resources)
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    }

    @Override
    public void close() throws InterruptedException {
        kubelet.close();
        client.close();
        api.close();
    }
}
