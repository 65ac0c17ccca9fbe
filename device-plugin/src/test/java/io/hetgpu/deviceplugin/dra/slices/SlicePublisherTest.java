package io.hetgpu.deviceplugin.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.kubelet.Backoff;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The publisher against fabric8's mock API server in CRUD mode. */
class SlicePublisherTest {

    private static final String NODE = "dgx-1";
    private static final String DRIVER = "gpu.hetgpu.io";
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Backoff FAST = new Backoff(Duration.ofMillis(20), Duration.ofMillis(200), 0.5);

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final GpuInventory inventory = new GpuInventory(dgx1);
    private final SliceApiDispatcher api = new SliceApiDispatcher();
    private KubernetesMockServer server;
    private KubernetesClient client;
    private SlicePublisher publisher;
    private String nodeUid;
    private KubernetesClient closeLater;

    @BeforeEach
    void setUp() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), api, false);
        server.init();
        client = server.createClient();
        nodeUid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create()
                .getMetadata().getUid();
    }

    @AfterEach
    void tearDown() {
        if (publisher != null) {
            publisher.close();
            closeLater.close();
        }
        client.close();
        server.destroy();
    }

    private SlicePublisher start(Duration resync) {
        // fabric8 retries a 500 itself; without that, the failures reach the publisher's own backoff.
        var noRetries = new KubernetesClientBuilder().withConfig(new ConfigBuilder(client.getConfiguration())
                .withRequestRetryBackoffLimit(0).build()).build();
        closeLater = noRetries;
        publisher = new SlicePublisher(new SliceWriter(noRetries, DRIVER, NODE), inventory, CardCatalog.defaults(), Map.of(0, "pci0000:00"),
                FAST, resync);
        publisher.start();
        return publisher;
    }

    private List<ResourceSlice> slices() {
        return client.resources(ResourceSlice.class).list().getItems();
    }

    private ResourceSlice theSlice() {
        return await().atMost(WAIT).until(this::slices, s -> s.size() == 1).get(0);
    }

    private Device device(ResourceSlice slice, String name) {
        return slice.getSpec().getDevices().stream().filter(d -> d.getName().equals(name)).findFirst().orElse(null);
    }

    private void health(int position, DeviceHealth health) {
        assertThat(inventory.apply(new HealthChange(dgx1.device(position).uuid(), health, "test"))).isTrue();
        publisher.inventoryChanged();
    }

    @Test
    void aDgx1IsPublishedAsOneSliceOwnedByItsNode() {
        start(Duration.ofHours(1));
        var slice = theSlice();

        await().atMost(WAIT).until(publisher::published);
        assertThat(slice.getMetadata().getName()).startsWith(NODE + "-" + DRIVER + "-");
        assertThat(slice.getMetadata().getOwnerReferences()).singleElement().satisfies(owner -> {
            assertThat(owner.getKind()).isEqualTo("Node");
            assertThat(owner.getName()).isEqualTo(NODE);
            assertThat(owner.getUid()).isEqualTo(nodeUid);
            assertThat(owner.getController()).isTrue();
        });
        assertThat(slice.getSpec().getNodeName()).isEqualTo(NODE);
        assertThat(slice.getSpec().getPool().getName()).isEqualTo(NODE);
        assertThat(slice.getSpec().getPool().getGeneration()).isEqualTo(1L);
        assertThat(slice.getSpec().getDevices()).hasSize(8);
        assertThat(device(slice, "gpu-0").getAttributes().get("resource.kubernetes.io/pcieRoot").getString()).isEqualTo("pci0000:00");
        assertThat(device(slice, "gpu-5").getAttributes()).containsKeys("nvlinkSet2", "nvlinkSet4", "nvlinkSet8");
    }

    @Test
    void anUnhealthyGpuIsTaintedInTheSameSliceAndUntaintedWhenItRecovers() {
        start(Duration.ofHours(1));
        var first = theSlice();

        health(2, DeviceHealth.UNHEALTHY);
        var tainted = await().atMost(WAIT).until(this::theSlice, s -> s.getSpec().getPool().getGeneration() == 2L);
        assertThat(tainted.getMetadata().getName()).isEqualTo(first.getMetadata().getName());
        assertThat(device(tainted, "gpu-2").getTaints()).singleElement().satisfies(taint -> {
            assertThat(taint.getKey()).isEqualTo("gpu.hetgpu.io/unhealthy");
            assertThat(taint.getEffect()).isEqualTo("NoSchedule");
        });
        assertThat(tainted.getSpec().getDevices()).hasSize(8);

        health(2, DeviceHealth.HEALTHY);
        var recovered = await().atMost(WAIT).until(this::theSlice, s -> s.getSpec().getPool().getGeneration() == 3L);
        assertThat(recovered.getMetadata().getName()).isEqualTo(first.getMetadata().getName());
        assertThat(recovered.getSpec().getDevices()).allSatisfy(d -> assertThat(d.getTaints()).isNullOrEmpty());
    }

    @Test
    void whereTheApiServerDropsTaintsAnUnhealthyGpuIsLeftOutUntilItRecovers() {
        api.dropTaints = true;
        start(Duration.ofHours(1));
        theSlice();

        health(6, DeviceHealth.UNHEALTHY);
        var without = await().atMost(WAIT).until(this::theSlice, s -> s.getSpec().getDevices().size() == 7);
        assertThat(device(without, "gpu-6")).isNull();

        health(6, DeviceHealth.HEALTHY);
        var back = await().atMost(WAIT).until(this::theSlice, s -> s.getSpec().getDevices().size() == 8);
        assertThat(device(back, "gpu-6")).isNotNull();
        assertThat(back.getSpec().getPool().getGeneration()).isGreaterThan(without.getSpec().getPool().getGeneration());
    }

    @Test
    void aRestartUpdatesTheSliceItLeftAboveItsGenerationAndDeletesExtraOnes() {
        var left = stale("dgx-1-gpu.hetgpu.io-left", NODE, DRIVER, 5);
        stale("dgx-1-gpu.hetgpu.io-extra", NODE, DRIVER, 3);
        stale("other-gpu.hetgpu.io-x", "other", DRIVER, 9);
        stale("dgx-1-gpu.nvidia.com-x", NODE, "gpu.nvidia.com", 2);

        start(Duration.ofHours(1));

        var ours = await().atMost(WAIT).until(() -> slices().stream().filter(s -> s.getSpec().getNodeName().equals(NODE)
                && s.getSpec().getDriver().equals(DRIVER)).toList(), s -> s.size() == 1 && s.get(0).getSpec().getDevices().size() == 8).get(0);
        assertThat(ours.getMetadata().getName()).isEqualTo(left.getMetadata().getName());
        assertThat(ours.getMetadata().getUid()).isEqualTo(left.getMetadata().getUid());
        assertThat(ours.getSpec().getPool().getGeneration()).isEqualTo(6L);
        assertThat(ours.getMetadata().getOwnerReferences()).extracting(o -> o.getUid()).containsExactly(nodeUid);
        assertThat(slices()).extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder("dgx-1-gpu.hetgpu.io-left", "other-gpu.hetgpu.io-x", "dgx-1-gpu.nvidia.com-x");
    }

    @Test
    void anApiServerThatFailsAtFirstIsRetriedUntilTheSliceHolds() {
        api.failures.set(4);
        start(Duration.ofHours(1));
        assertThat(publisher.published()).isFalse();

        await().atMost(WAIT).until(publisher::published);
        assertThat(api.failures.get()).isZero();
        assertThat(theSlice().getSpec().getDevices()).hasSize(8);
    }

    @Test
    void aSliceDeletedBySomeoneElseIsWrittenAgainAtTheNextCheck() {
        start(Duration.ofMillis(100));
        var first = theSlice();
        client.resource(first).delete();

        var again = await().atMost(WAIT).until(this::slices, s -> s.size() == 1 && !s.get(0).getMetadata().getName().equals(first.getMetadata().getName())).get(0);
        assertThat(again.getSpec().getDevices()).hasSize(8);
        int writes = api.sliceWrites.get();
        // Quiet from then on: a check that finds the slice as written writes nothing.
        await().during(Duration.ofMillis(400)).atMost(WAIT).until(() -> api.sliceWrites.get() == writes);
    }

    private ResourceSlice stale(String name, String node, String driver, long generation) {
        return client.resource(new ResourceSliceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withDriver(driver).withNodeName(node).withNewPool().withName(node).withGeneration(generation).withResourceSliceCount(1L)
                .endPool().addNewDevice().withName("gpu-0").endDevice().endSpec().build()).create();
    }
}
