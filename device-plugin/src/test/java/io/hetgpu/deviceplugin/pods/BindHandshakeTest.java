package io.hetgpu.deviceplugin.pods;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.hetgpu.deviceplugin.DevicePlugin;
import io.hetgpu.deviceplugin.FakeGpuSource;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerDevices;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerResources;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResources;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.PreferredAllocationRequest;
import io.hetgpu.deviceplugin.devices.ContainerEdits;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.kubelet.DevicePluginEndpoint;
import io.hetgpu.deviceplugin.kubelet.DevicePluginService;
import io.hetgpu.deviceplugin.kubelet.KubeletStandIn;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The plugin's half of the bind handshake end to end: fabric8's mock API server (CRUD) holds the pods and their
 * {@code hetgpu.io/gpu-devices} annotations, the kubelet stand-in calls GetPreferredAllocation and Allocate over
 * real Unix sockets, as kubelet does for each pod it admits.
 */
class BindHandshakeTest {

    private static final String NODE = "dgx-1";
    private static final String RESOURCE = "nvidia.com/gpu";
    private static final Instant T0 = Instant.parse("2026-11-22T14:05:00Z");
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private KubernetesMockServer server;
    private KubernetesClient client;

    @TempDir
    Path temp;

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final List<String> all = dgx1.devices().stream().map(d -> d.uuid()).toList();
    private final Deque<AutoCloseable> running = new ArrayDeque<>();
    private Path folder;
    private KubeletStandIn kubelet;

    @BeforeEach
    void setUp() throws Exception {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new NodeBlindCrudDispatcher(), false);
        server.init();
        client = server.createClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        folder = Files.createDirectory(temp.resolve("device-plugins"));
        kubelet = new KubeletStandIn(folder, temp.resolve("pod-resources.sock")).start();
    }

    @AfterEach
    void tearDown() throws Exception {
        while (!running.isEmpty()) {
            running.pop().close();
        }
        kubelet.close();
        client.close();
        server.destroy();
    }

    @Test
    void kubeletIsOfferedTheAssignedDevicesOfTheEarliestBoundPodAndTheContainerSeesThemInOrder() throws Exception {
        create(pod("later", T0.plusSeconds(5), 2, 3, 4));
        create(pod("first", T0, 2, 7, 2));
        create(new PodBuilder(pod("other-node", T0.minusSeconds(5), 2, 0, 1)).editSpec().withNodeName("dgx-2").endSpec().build());
        var plugin = startWithMetrics();
        await().atMost(PATIENCE).until(() -> preferred(2).equals(List.of(uuid(7), uuid(2))));

        var envs = allocate(uuid(2), uuid(7));

        assertThat(envs).containsEntry(ContainerEdits.VISIBLE_DEVICES, uuid(7) + "," + uuid(2));
        assertThat(preferred(2)).as("the next pod's turn").containsExactly(uuid(3), uuid(4));
        assertThat(plugin.assignmentMismatches()).isZero();
    }

    @Test
    void devicesOtherThanTheAssignedOnesAreServedCountedAndReportedOnThePod() throws Exception {
        create(pod("train", T0, 2, 7, 2));
        var plugin = startWithMetrics();
        await().atMost(PATIENCE).until(() -> preferred(2).equals(List.of(uuid(7), uuid(2))));

        var envs = allocate(uuid(0), uuid(1)); // kubelet ignored the preference

        assertThat(envs).containsEntry(ContainerEdits.VISIBLE_DEVICES, uuid(0) + "," + uuid(1));
        assertThat(plugin.assignmentMismatches()).isEqualTo(1);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(client.v1().events().inNamespace("ml").list().getItems())
                .singleElement().satisfies(event -> {
                    assertThat(event.getReason()).isEqualTo(MismatchEvents.REASON);
                    assertThat(event.getType()).isEqualTo("Warning");
                    assertThat(event.getInvolvedObject().getName()).isEqualTo("train");
                    assertThat(event.getInvolvedObject().getUid())
                            .isEqualTo(client.pods().inNamespace("ml").withName("train").get().getMetadata().getUid());
                    assertThat(event.getMessage()).contains(uuid(0), uuid(7));
                }));
        // Matched once: the pod is not offered again.
        assertThat(preferred(2)).isNotEqualTo(List.of(uuid(7), uuid(2)));
    }

    @Test
    void anAnnotationWrittenAfterThePodWasSeenIsFollowedAndABadOneIsNot() throws Exception {
        create(new PodBuilder(pod("bad", T0, 1, 6)).editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, "[\"GPU-6\"]").endMetadata().build());
        create(new PodBuilder(pod("late-annotation", T0.plusSeconds(1), 2, 5, 6)).editMetadata().withAnnotations(java.util.Map.of())
                .endMetadata().build());
        startWithMetrics();
        var allocatorChoice = preferred(2);

        client.pods().inNamespace("ml").withName("late-annotation").edit(p -> pod("late-annotation", T0.plusSeconds(1), 2, 5, 6));

        await().atMost(PATIENCE).until(() -> preferred(2).equals(List.of(uuid(5), uuid(6))));
        assertThat(allocatorChoice).isNotEqualTo(List.of(uuid(5), uuid(6)));
        assertThat(preferred(1)).as("the bad annotation is not followed").hasSize(1);
    }

    @Test
    void aRestartedPluginDoesNotMatchThePodsKubeletAllocatedBeforeIt() throws Exception {
        create(new PodBuilder(pod("started", T0.minusSeconds(10), 2, 3, 4)).editOrNewStatus().withPhase("Running").endStatus().build());
        create(pod("admitted-before-restart", T0, 2, 7, 2));
        create(pod("waiting", T0.plusSeconds(1), 2, 0, 1));
        kubelet.setPodResources(ListPodResourcesResponse.newBuilder()
                .addPodResources(PodResources.newBuilder().setName("admitted-before-restart").setNamespace("ml")
                        .addContainers(ContainerResources.newBuilder().setName("main")
                                .addDevices(ContainerDevices.newBuilder().setResourceName(RESOURCE).addDeviceIds(uuid(7)).addDeviceIds(uuid(2)))))
                .build());

        // The whole plugin, as DaemonSet and test cluster start it.
        running.push(DevicePlugin.start(new DevicePlugin.Settings(folder, temp.resolve("pod-resources.sock"), RESOURCE,
                Set.of(DeviceListStrategy.ENVVAR), Duration.ofHours(1), 0, NODE, CardCatalog.defaults()),
                new FakeGpuSource(dgx1), Optional.of(client)));
        kubelet.nextRegistration();

        assertThat(preferred(2)).containsExactly(uuid(0), uuid(1));
        assertThat(allocate(uuid(0), uuid(1))).containsEntry(ContainerEdits.VISIBLE_DEVICES, uuid(0) + "," + uuid(1));
    }

    /** The plugin's parts wired as {@link DevicePlugin} wires them, with metrics the test reads. */
    private PluginMetrics startWithMetrics() throws Exception {
        var inventory = new GpuInventory(dgx1);
        var metrics = PluginMetrics.unscraped(inventory);
        var pending = new PendingAssignments(NODE, all);
        var watch = BoundPodWatch.start(client, NODE, RESOURCE, io.hetgpu.gpu.tier.CardCatalog.defaults(), pending);
        running.push(watch);
        assertThat(watch.awaitSynced(PATIENCE)).isTrue();
        pending.listed();
        var events = new MismatchEvents(client, NODE, Clock.systemUTC());
        running.push(events);
        var transport = new UnixSocketTransport();
        running.push(transport);
        var endpoint = new DevicePluginEndpoint(transport, folder, RESOURCE, new DevicePluginService(inventory,
                Set.of(DeviceListStrategy.ENVVAR), metrics, ids -> { }, pending, events, CardCatalog.defaults()), metrics);
        running.push(endpoint);
        endpoint.start();
        kubelet.nextRegistration();
        return metrics;
    }

    private List<String> preferred(int size) {
        return kubelet.plugin().getPreferredAllocation(PreferredAllocationRequest.newBuilder()
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(all).setAllocationSize(size))
                .build()).getContainerResponses(0).getDeviceIDsList();
    }

    private java.util.Map<String, String> allocate(String... ids) {
        return kubelet.plugin().allocate(AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids))).build())
                .getContainerResponses(0).getEnvsMap();
    }

    private void create(Pod pod) {
        client.pods().inNamespace("ml").resource(pod).create();
    }

    /** A pending pod bound to NODE at {@code boundAt}, one container requesting {@code gpus}, assigned the GPUs at these positions. */
    private Pod pod(String name, Instant boundAt, int gpus, Integer... positions) {
        var devices = List.of(positions).stream().map(this::uuid).toList();
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("ml").withUid("uid-" + name)
                .addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, new DeviceAssignmentCodec().encode(new DeviceAssignment(NODE, devices, boundAt)))
                .endMetadata()
                .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(RESOURCE, new Quantity(String.valueOf(gpus))).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus()
                .build();
    }

    private String uuid(int position) {
        return dgx1.devices().get(position).uuid();
    }
}
