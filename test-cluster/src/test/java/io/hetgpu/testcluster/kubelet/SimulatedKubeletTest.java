package io.hetgpu.testcluster.kubelet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.hetgpu.deviceplugin.DevicePlugin;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.testcluster.api.ApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real device plugin, started with a simulated DGX-1 V100, against the simulated kubelet and the test API server. */
class SimulatedKubeletTest {

    private static final String NODE = "dgx1-v100-1";
    private static final String GPU = HetgpuKeys.DEFAULT_RESOURCE_NAME;

    @TempDir
    Path root;

    private ApiServer api;
    private KubernetesClient client;
    private SimulatedKubelet kubelet;
    private SimulatedGpuSource source;
    private DevicePlugin plugin;

    @BeforeEach
    void start() throws Exception {
        api = ApiServer.start();
        client = api.newClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
                .withNewStatus().addToCapacity("cpu", new Quantity("64")).addToAllocatable("cpu", new Quantity("64")).endStatus().build()).create();
        var folders = KubeletFolders.under(root);
        kubelet = new SimulatedKubelet(NODE, GPU, folders, client).start();
        source = SimulatedGpuSource.open("dgx1-v100", NODE);
        plugin = DevicePlugin.start(new DevicePlugin.Settings(folders.devicePlugins(), folders.podResourcesSocket(), GPU,
                Set.of(DeviceListStrategy.ENVVAR), Duration.ofMillis(200), 0, NODE, CardCatalog.defaults()), source, Optional.of(client));
    }

    @AfterEach
    void stop() throws Exception {
        plugin.close();
        kubelet.close();
        client.close();
        api.close();
    }

    @Test
    void pluginDevicesBecomeNodeCapacityAndInventory() {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var node = client.nodes().withName(NODE).get();
            assertThat(node.getStatus().getCapacity().get(GPU)).isEqualTo(new Quantity("8"));
            assertThat(node.getStatus().getAllocatable().get(GPU)).isEqualTo(new Quantity("8"));
            assertThat(node.getMetadata().getLabels()).containsEntry(HetgpuKeys.LABEL_GPU_MODEL, "V100").containsEntry(HetgpuKeys.LABEL_GPU_NVLINK, "true");
            assertThat(node.getMetadata().getAnnotations()).containsKeys(HetgpuKeys.ANNOTATION_INVENTORY, HetgpuKeys.ANNOTATION_FREE);
        });
        assertThat(kubelet.registrations()).singleElement().satisfies(r -> assertThat(r.getResourceName()).isEqualTo(GPU));
    }

    @Test
    void boundPodGetsAnNvlinkPairAndRunsAndLeavesTheFreeSet() {
        var uuids = source.topology().devices().stream().map(d -> d.uuid()).toList();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.deviceHealth().size() == 8);

        client.pods().resource(pod("train-0", 2)).create();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(client.pods().inNamespace("default").withName("train-0").get().getStatus().getPhase()).isEqualTo("Running"));
        var devices = List.of(client.pods().inNamespace("default").withName("train-0").get().getMetadata().getAnnotations()
                .get(SimulatedKubelet.DEVICES_ANNOTATION).split(","));
        // The first NV2 pair of the hybrid cube-mesh: GPU 0 and GPU 3.
        assertThat(devices).containsExactly(uuids.get(0), uuids.get(3));
        assertThat(kubelet.allocations()).containsEntry("default/train-0", Map.of("main", devices));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var free = new FreeDevicesCodec().decode(client.nodes().withName(NODE).get().getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_FREE));
            assertThat(free.uuids()).hasSize(6).doesNotContainAnyElementsOf(devices);
        });
    }

    @Test
    void restartDeletesSocketsAndThePluginRegistersAgain() throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.registrations().size() == 1);

        long restartedAt = System.nanoTime();
        kubelet.restart();

        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.registrations().size() == 2);
        System.out.printf("re-registered %d ms after the sockets were deleted%n", (System.nanoTime() - restartedAt) / 1_000_000);
        client.pods().resource(pod("after-restart", 1)).create();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(client.pods().inNamespace("default").withName("after-restart").get().getStatus().getPhase()).isEqualTo("Running"));
    }

    @Test
    void unhealthyGpuLeavesAllocatableAndIsNeverHandedOut() {
        var sick = source.topology().device(0).uuid();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.deviceHealth().size() == 8);

        source.setHealth(sick, DeviceHealth.UNHEALTHY, "XID 79 (GPU has fallen off the bus)");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(kubelet.deviceHealth()).containsEntry(sick, "Unhealthy"));

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(client.nodes().withName(NODE).get().getStatus().getAllocatable().get(GPU)).isEqualTo(new Quantity("7")));
        client.pods().resource(pod("big", 7)).create();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(client.pods().inNamespace("default").withName("big").get().getStatus().getPhase()).isEqualTo("Running"));
        assertThat(kubelet.allocations().get("default/big").get("main")).hasSize(7).doesNotContain(sick);
    }

    @Test
    void podThatDoesNotFitFailsAdmission() {
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.deviceHealth().size() == 8);

        client.pods().resource(pod("too-big", 9)).create();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var status = client.pods().inNamespace("default").withName("too-big").get().getStatus();
            assertThat(status.getPhase()).isEqualTo("Failed");
            assertThat(status.getReason()).isEqualTo("UnexpectedAdmissionError");
        });
    }

    @Test
    void aPodThatEndsIsWrittenSucceededAndItsGpusAreFreeAgain() {
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.deviceHealth().size() == 8);
        client.pods().resource(pod("train-0", 2)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.allocations().containsKey("default/train-0"));
        var end = new PodEnd("lstm", "V100", 2, 43_200, java.time.Instant.parse("2026-11-28T07:20:00Z"),
                java.time.Instant.parse("2026-11-28T08:00:00Z"));

        kubelet.end("default", "train-0", end);

        var pod = client.pods().inNamespace("default").withName("train-0").get();
        assertThat(pod.getStatus().getPhase()).isEqualTo("Succeeded");
        assertThat(pod.getStatus().getContainerStatuses().getFirst().getState().getTerminated().getMessage()).isEqualTo("hetgpu.io/work: 43200\n");
        assertThat(kubelet.allocations()).doesNotContainKey("default/train-0");
        // The plugin reads PodResources: the pod's GPUs are in the free set again.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(new FreeDevicesCodec().decode(client.nodes().withName(NODE).get()
                .getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_FREE)).uuids()).hasSize(8));
        // Ended, it is not admitted again.
        client.pods().resource(pod("train-1", 1)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.allocations().containsKey("default/train-1"));
        assertThat(kubelet.allocations()).doesNotContainKey("default/train-0");
        assertThat(client.pods().inNamespace("default").withName("train-0").get().getStatus().getPhase()).isEqualTo("Succeeded");
    }

    @Test
    void aPodThisKubeletNeverAdmittedCannotEndHere() {
        var end = new PodEnd("lstm", "V100", 1, 100, java.time.Instant.parse("2026-11-28T07:20:00Z"), java.time.Instant.parse("2026-11-28T08:00:00Z"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> kubelet.end("default", "elsewhere", end))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("default/elsewhere").hasMessageContaining("never admitted");
    }

    private static io.fabric8.kubernetes.api.model.Pod pod(String name, int gpus) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(GPU, new Quantity(Integer.toString(gpus))).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build();
    }
}
