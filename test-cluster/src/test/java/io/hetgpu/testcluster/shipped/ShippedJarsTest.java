package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

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
@ExtendWith(ShippedClusterExtension.class)
class ShippedJarsTest {

    private static final String GPU_NODE = ShippedCluster.GPU_NODE;
    private static final String CPU_NODE = ShippedCluster.CPU_NODE;
    private static final Duration START = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ShippedCluster cluster;
    private final KubernetesClient client;
    private final SimulatedKubelet kubelet;

    ShippedJarsTest(ShippedCluster cluster) {
        this.cluster = cluster;
        this.client = cluster.client;
        this.kubelet = cluster.kubelet;
    }

    @Test
    void theDevicePluginJarRegistersWithKubeletAndPublishesItsNode() throws Exception {
        var pod = cluster.pluginPod();
        try (var plugin = cluster.start(DEVICE_PLUGIN, pod, "device-plugin.log")) {
            await("the device plugin registers with kubelet and writes its Node").atMost(START)
                    .failFast("the device plugin exited", JarProcess.stillRunning(plugin)).untilAsserted(() -> {
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

            // The liveness probe's path and the metrics docs/monitoring.md tells admins to scrape, on the container's port.
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
        var pluginPod = cluster.pluginPod();
        var pod = cluster.extenderPod();
        assertThat(pod.args()).as("the Deployment's flags").contains("--kubeconfig=in-cluster", "--host=127.0.0.1");
        try (var plugin = cluster.start(DEVICE_PLUGIN, pluginPod, "device-plugin.log");
             var extender = cluster.start(SCHEDULER_EXTENDER, pod, "extender.log")) {
            var base = "http://127.0.0.1:" + pod.flagPort("--port");
            var probes = "http://127.0.0.1:" + pod.port("metrics");
            await("the extender's informers sync (readinessProbe /readyz on the metrics port)").atMost(START).ignoreExceptions()
                    .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                        assertThat(get(probes + "/readyz").statusCode()).as(extender::describe).isEqualTo(200);
                    });
            await("the GPU node's inventory reaches the extender").atMost(START)
                    .failFast("the device plugin exited", JarProcess.stillRunning(plugin)).untilAsserted(() -> {
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

    @Test
    void aRecordWrittenByHandOnAPodDoesNotMakeTheExtenderReportItsNodeFull() throws Exception {
        var pluginPod = cluster.pluginPod();
        var pod = cluster.extenderPod();
        try (var plugin = cluster.start(DEVICE_PLUGIN, pluginPod, "device-plugin.log");
             var extender = cluster.start(SCHEDULER_EXTENDER, pod, "extender.log")) {
            var base = "http://127.0.0.1:" + pod.flagPort("--port");
            var probes = "http://127.0.0.1:" + pod.port("metrics");
            var uuids = new java.util.ArrayList<String>();
            await("the GPU node's inventory, eight GPUs free, reaches the extender").atMost(START).ignoreExceptions()
                    .failFast("the device plugin exited", JarProcess.stillRunning(plugin))
                    .failFast("the extender exited", JarProcess.stillRunning(extender)).untilAsserted(() -> {
                        var inventory = new InventoryCodec().decode(client.nodes().withName(GPU_NODE).get().getMetadata().getAnnotations()
                                .get(HetgpuKeys.ANNOTATION_INVENTORY));
                        assertThat(inventory.devices()).hasSize(8);
                        var filter = post(base + "/filter", gpuPod(8), List.of(GPU_NODE));
                        assertThat(names(filter.get("NodeNames"))).as(filter::toString).containsExactly(GPU_NODE);
                        uuids.clear();
                        inventory.devices().forEach(device -> uuids.add(device.uuid()));
                    });
            // A pod that asks no GPU and that no scheduler places, claiming every GPU of the node until 2099: the UUIDs are
            // public on the Node.
            var forged = new io.hetgpu.gpu.inventory.DeviceAssignmentCodec().encode(
                    new io.hetgpu.gpu.inventory.DeviceAssignment(GPU_NODE, uuids, java.time.Instant.parse("2099-01-01T00:00:00Z")));
            client.pods().inNamespace("default").resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                    .withName("squatter").withNamespace("default").addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, forged).endMetadata()
                    .withNewSpec().withSchedulerName("nobody").addNewContainer().withName("main").withImage("busybox").endContainer()
                    .endSpec().withNewStatus().withPhase("Pending").endStatus().build()).create();

            await("the extender reads the forged record and refuses it").atMost(START).ignoreExceptions().untilAsserted(() ->
                    assertThat(get(probes + "/metrics").body()).contains("hetgpu_extender_untrusted_records_total{reason=\"not_schedulable\"} 1.0"));
            var filter = post(base + "/filter", gpuPod(8), List.of(GPU_NODE));
            assertThat(names(filter.get("NodeNames"))).as(filter::toString).containsExactly(GPU_NODE);
            // The extender counts the refusal, then logs it: the line may reach its output just after the metric shows.
            await("the refusal is logged").atMost(START).untilAsserted(() ->
                    assertThat(extender.output()).contains("pod default/squatter: hetgpu.io/gpu-devices not trusted (not_schedulable)"));
        }
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
        return cluster.post(url, "{\"Pod\":" + pod + ",\"NodeNames\":" + JSON.writeValueAsString(nodeNames) + "}");
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return cluster.get(url);
    }

    private static List<String> names(JsonNode array) {
        return array == null || array.isNull() ? List.of() : JSON.convertValue(array, JSON.getTypeFactory().constructCollectionType(List.class, String.class));
    }
}
