package io.hetgpu.deviceplugin.node;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.hetgpu.deviceplugin.FakeGpuSource;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerDevices;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerResources;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResources;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.kubelet.KubeletStandIn;
import io.hetgpu.deviceplugin.kubelet.PodResourcesReader;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.tier.CardCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The publisher against fabric8's mock API server (CRUD mode) and PodResources served by the kubelet stand-in. */
@EnableKubernetesMockClient(crud = true)
class NodeInventorySyncTest {

    private static final String NODE = "gpu-node-1";

    KubernetesClient client;
    KubernetesMockServer server;

    @TempDir
    Path temp;

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final FakeGpuSource source = new FakeGpuSource(dgx1);
    private final GpuInventory inventory = new GpuInventory(dgx1);
    private UnixSocketTransport transport;
    private KubeletStandIn kubelet;
    private PodResourcesReader podResources;
    private NodeInventorySync sync;

    @BeforeEach
    void setUp() throws Exception {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .addToLabels("team", "vision")
                .addToLabels("hetgpu.io/gpu.model", "P100")
                .addToAnnotations("node.alpha.kubernetes.io/ttl", "0")
                .endMetadata().build()).create();
        source.watchHealth(inventory::apply);
        transport = new UnixSocketTransport();
        kubelet = new KubeletStandIn(Files.createDirectory(temp.resolve("device-plugins")), temp.resolve("pod-resources.sock")).start();
        podResources = new PodResourcesReader(transport, temp.resolve("pod-resources.sock"));
        sync = new NodeInventorySync(inventory, new NodeInventory(CardCatalog.defaults(), Duration.ofHours(1)),
                new NodeInventoryPublisher(client, NODE), () -> podResources.heldDevices("nvidia.com/gpu"),
                Clock.systemUTC(), Duration.ofHours(1), PluginMetrics.unscraped(inventory));
    }

    @AfterEach
    void tearDown() throws Exception {
        sync.close();
        podResources.close();
        kubelet.close();
        transport.close();
    }

    /**
     * A round that closing cuts short (kubelet's PodResources call interrupted, as gRPC reports it) is the plugin
     * stopping, not a problem: no warning at every shutdown that happens to land on a round. The same failure while
     * running is still one.
     */
    @Test
    void aRoundCutShortByCloseIsNoWarningButTheSameFailureWhileRunningIs() throws Exception {
        var asked = new java.util.concurrent.CountDownLatch(1);
        var failNow = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.function.Supplier<Set<String>> blocking = () -> {
            if (failNow.get()) {
                throw new IllegalStateException("UNAVAILABLE: kubelet is away");
            }
            asked.countDown();
            try {
                new java.util.concurrent.CountDownLatch(1).await();
            } catch (InterruptedException e) {
                throw new IllegalStateException("CANCELLED: Thread interrupted", e);
            }
            return Set.of();
        };
        var stderr = System.err;
        var captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            var stopping = new NodeInventorySync(inventory, new NodeInventory(CardCatalog.defaults(), Duration.ofHours(1)),
                    new NodeInventoryPublisher(client, NODE), blocking, Clock.systemUTC(), Duration.ofHours(1), PluginMetrics.unscraped(inventory));
            stopping.start();
            assertThat(asked.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            stopping.close();
            assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("WARN").doesNotContain("PodResources");

            failNow.set(true);
            var running = new NodeInventorySync(inventory, new NodeInventory(CardCatalog.defaults(), Duration.ofHours(1)),
                    new NodeInventoryPublisher(client, NODE), blocking, Clock.systemUTC(), Duration.ofHours(1), PluginMetrics.unscraped(inventory));
            running.refreshNow().get(10, java.util.concurrent.TimeUnit.SECONDS);
            running.close();
            assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8))
                    .contains("WARN").contains("Cannot read kubelet's PodResources API").contains("kubelet is away");
        } finally {
            System.setErr(stderr);
        }
    }

    @Test
    void publishesLabelsAndAnnotationsAndKeepsEveryoneElses() throws Exception {
        sync.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> labels().containsKey("hetgpu.io/gpu.present"));
        assertThat(labels()).containsEntry("team", "vision")
                .containsEntry("hetgpu.io/gpu.model", "V100")
                .containsEntry("hetgpu.io/gpu.count", "8")
                .containsEntry("hetgpu.io/gpu.nvlink", "true");
        assertThat(annotations()).containsEntry("node.alpha.kubernetes.io/ttl", "0");
        assertThat(new InventoryCodec().decode(annotations().get("hetgpu.io/gpu-inventory"))).isEqualTo(dgx1);
    }

    @Test
    void freeSetFollowsPodResources() throws Exception {
        sync.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> freeDevices().size() == 8);

        kubelet.setPodResources(ListPodResourcesResponse.newBuilder()
                .addPodResources(PodResources.newBuilder().setName("train-0").setNamespace("ml")
                        .addContainers(ContainerResources.newBuilder().setName("main")
                                .addDevices(ContainerDevices.newBuilder().setResourceName("nvidia.com/gpu")
                                        .addDeviceIds(dgx1.device(0).uuid()).addDeviceIds(dgx1.device(4).uuid()))
                                .addDevices(ContainerDevices.newBuilder().setResourceName("example.com/nic").addDeviceIds("nic-0"))))
                .build());
        sync.allocated();

        await().atMost(Duration.ofSeconds(10)).until(() -> freeDevices().size() == 6);
        assertThat(freeDevices()).doesNotContain(dgx1.device(0).uuid(), dgx1.device(4).uuid());
    }

    @Test
    void patchesOnlyWhenSomethingChanged() throws Exception {
        sync.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> freeDevices().size() == 8);
        sync.refreshNow().get();
        int requests = server.getRequestCount();

        sync.refreshNow().get();
        sync.refreshNow().get();
        assertThat(server.getRequestCount()).isEqualTo(requests);

        source.report(dgx1.device(5).uuid(), DeviceHealth.UNHEALTHY);
        await().atMost(Duration.ofSeconds(10)).until(() -> annotations().get("hetgpu.io/gpu-inventory").contains("unhealthy"));
        assertThat(labels()).containsEntry("team", "vision");
    }

    private Map<String, String> labels() {
        return client.nodes().withName(NODE).get().getMetadata().getLabels();
    }

    private Map<String, String> annotations() {
        return client.nodes().withName(NODE).get().getMetadata().getAnnotations();
    }

    private Set<String> freeDevices() throws Exception {
        var text = annotations().get("hetgpu.io/gpu-free");
        return text == null ? Set.of() : new FreeDevicesCodec().decode(text).uuids();
    }
}
