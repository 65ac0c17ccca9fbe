package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The device plugin jar as hetgpu's DRA driver ({@code java -jar}, the JVM options of its Dockerfile, the arguments,
 * environment and mounts of {@code manifests/overlays/dra}'s DaemonSet) against the test cluster's API server and a
 * simulated kubelet that speaks the plugin watcher's registration and DRA over Unix sockets: registered, its node's
 * ResourceSlice stored as the API server keeps it, a claim allocated as kube-scheduler writes it prepared into a CDI spec
 * in the mounted CDI folder and unprepared when its pod goes, its probes and metrics answered. One jar for the class.
 *
 * <p>What differs from the pod: as in {@link ShippedJarsTest}, host paths are the simulated kubelet's folders, the port a
 * free one, the API server plain HTTP through {@code KUBERNETES_MASTER}; and there is no GPU here, so the one argument
 * {@code --gpu-source=nvml} is {@code --gpu-source=simulated:dgx-a100} (the NVML path of the jar is
 * {@link ShippedNvmlPluginTest}'s).
 */
@ExtendWith(ShippedClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ShippedDraPluginTest {

    private static final String NODE = ShippedCluster.GPU_NODE;
    private static final String NS = "default";
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration STEP = Duration.ofSeconds(15);

    private final ShippedCluster cluster;
    private final KubernetesClient client;
    private final SimulatedKubelet kubelet;
    private PodSandbox pod;
    private JarProcess plugin;

    ShippedDraPluginTest(ShippedCluster cluster) {
        this.cluster = cluster;
        this.client = cluster.client;
        this.kubelet = cluster.kubelet;
    }

    @BeforeAll
    void startTheJarAsTheDraOverlayRunsIt() {
        pod = cluster.draPluginPod();
        assertThat(pod.args()).as("the overlay's DaemonSet").contains("--kubelet-api=dra", "--gpu-source=nvml");
        plugin = cluster.start(DEVICE_PLUGIN, pod, "dra-plugin.log", args -> args.stream()
                .map(arg -> arg.equals("--gpu-source=nvml") ? "--gpu-source=simulated:dgx-a100" : arg).toList());
        await("kubelet's plugin watcher registers the driver and its slice is published").atMost(START)
                .failFast("the node agent exited", JarProcess.stillRunning(plugin)).untilAsserted(() -> {
                    assertThat(kubelet.draDrivers()).as(plugin::describe).contains(HetgpuDra.DRIVER);
                    assertThat(slices()).as(plugin::describe).isNotEmpty();
                });
    }

    @AfterAll
    void stopItAsKubeletDoes() {
        if (plugin == null) {
            return;
        }
        try (var running = plugin) {
            assertThat(running.stop()).as(running::describe).isIn(0, 143);
            assertThat(running.output()).contains("Stopping (signal received)");
        }
    }

    @Test
    void itRegistersFromKubeletsFoldersAndPublishesItsNodesGpusWithTheContractsAttributes() throws Exception {
        // kubelet's DRA plugins live at plugins/<driver>/, the registration socket in plugins_registry/.
        var folders = kubelet.folders();
        assertThat(folders.plugins().resolve(HetgpuDra.DRIVER).resolve("dra.sock")).exists();
        assertThat(folders.pluginsRegistry().resolve(HetgpuDra.DRIVER + "-reg.sock")).exists();

        var slice = slices().getFirst();
        assertThat(slices()).as("one slice for the node").hasSize(1);
        assertThat(slice.getSpec().getDriver()).isEqualTo(HetgpuDra.DRIVER);
        assertThat(slice.getSpec().getNodeName()).isEqualTo(NODE);
        assertThat(slice.getSpec().getPool().getName()).isEqualTo(HetgpuDra.pool(NODE));
        assertThat(slice.getSpec().getPool().getGeneration()).isPositive();
        assertThat(slice.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
        assertThat(slice.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(owner -> assertThat(owner.getKind() + "/" + owner.getName()).isEqualTo("Node/" + NODE));

        // The devices as the shared contract gives them for a DGX A100 (no PCIe root: this machine's sysfs has no such bus).
        List<HetgpuDra.Device> expected;
        try (var gpus = SimulatedGpuSource.open("dgx-a100", NODE)) {
            expected = HetgpuDra.devices(gpus.topology(), CardCatalog.defaults(), Map.of());
        }
        assertThat(slice.getSpec().getDevices()).extracting(device -> device.getName())
                .containsExactlyElementsOf(expected.stream().map(HetgpuDra.Device::name).toList());
        for (var device : slice.getSpec().getDevices()) {
            var want = expected.stream().filter(d -> d.name().equals(device.getName())).findFirst().orElseThrow();
            var published = new TreeMap<String, String>();
            device.getAttributes().forEach((name, value) -> published.put(name, text(value)));
            var wanted = new TreeMap<String, String>();
            want.attributes().forEach((name, value) -> wanted.put(name, text(value)));
            // The tier comes from the mounted tier table, which may rank cards otherwise than the defaults.
            assertThat(published.remove(HetgpuDra.TIER)).as(device.getName() + " tier").isNotBlank();
            wanted.remove(HetgpuDra.TIER);
            assertThat(published).as(device.getName()).isEqualTo(wanted).containsEntry(HetgpuDra.MODEL, "A100")
                    .containsKeys(HetgpuDra.nvlinkSet(2), HetgpuDra.nvlinkSet(8));
            assertThat(device.getCapacity()).containsKey(HetgpuDra.MEMORY);
        }
    }

    @Test
    void aClaimAllocatedOnItIsPreparedIntoACdiSpecAndUnpreparedWhenItsPodGoes() throws Exception {
        var uid = allocatedClaim("pair", "gpu-2", "gpu-3");
        client.pods().resource(new PodBuilder().withNewMetadata().withName("train").withNamespace(NS).endMetadata()
                .withNewSpec().withNodeName(NODE).addNewResourceClaim().withName("gpus").withResourceClaimName("pair").endResourceClaim()
                .addNewContainer().withName("main").withImage("trainer").endContainer().endSpec().build()).create();

        await("kubelet prepares the claim and runs the pod").atMost(STEP)
                .failFast("the node agent exited", JarProcess.stillRunning(plugin)).until(() -> {
                    var status = client.pods().inNamespace(NS).withName("train").get().getStatus();
                    return status != null && "Running".equals(status.getPhase());
                });
        assertThat(kubelet.preparedClaims(NS + "/train")).isEqualTo(Map.of("gpus",
                List.of(HetgpuDra.DRIVER + "/claim=" + uid + "-gpu-2", HetgpuDra.DRIVER + "/claim=" + uid + "-gpu-3")));
        // Written where the DaemonSet mounts the host's /var/run/cdi, which the container runtime reads.
        var spec = pod.mountedAt("/var/run/cdi").resolve(HetgpuDra.DRIVER + "-claim_" + uid + ".json");
        assertThat(Files.readString(spec)).contains("\"/dev/nvidia2\"", "\"/dev/nvidia3\"").doesNotContain("\"/dev/nvidia0\"");
        assertThat(metrics()).contains("hetgpu_dra_claims_prepared_total 1.0");

        client.pods().inNamespace(NS).withName("train").delete();
        await("the claim is unprepared once its pod is gone").atMost(STEP)
                .failFast("the node agent exited", JarProcess.stillRunning(plugin)).until(() -> !Files.exists(spec));
        assertThat(metrics()).contains("hetgpu_dra_claims_unprepared_total 1.0");
    }

    @Test
    void itsProbeAndMetricsAnswerOnTheContainersPort() throws Exception {
        assertThat(cluster.get(status() + "/healthz").statusCode()).as(plugin::describe).isEqualTo(200);
        assertThat(metrics()).contains("hetgpu_dra_registrations_total 1.0", "hetgpu_device_plugin_devices");
        assertThat(plugin.output()).as("start-up log").contains("as DRA driver " + HetgpuDra.DRIVER)
                .doesNotContain("sun.misc.Unsafe").doesNotContain("Exception");
    }

    private List<ResourceSlice> slices() {
        return client.resources(ResourceSlice.class).list().getItems().stream()
                .filter(s -> HetgpuDra.DRIVER.equals(s.getSpec().getDriver())).toList();
    }

    /** A claim for two of the node's GPUs, allocated as kube-scheduler writes it; returns its UID. */
    private String allocatedClaim(String name, String... devices) {
        var claim = client.resources(ResourceClaim.class).resource(new ResourceClaimBuilder().withNewMetadata().withName(name)
                .withNamespace(NS).endMetadata().withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                .withDeviceClassName(HetgpuDra.DRIVER).withCount((long) devices.length).endExactly().endRequest().endDevices().endSpec()
                .build()).create();
        var results = java.util.Arrays.stream(devices).map(device -> new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER)
                .withPool(HetgpuDra.pool(NODE)).withDevice(device).withRequest("gpus").build()).toList();
        claim.setStatus(new ResourceClaimBuilder().withNewStatus().withNewAllocation().withNewDevices().withResults(results).endDevices()
                .withNodeSelector(new NodeSelectorBuilder().addNewNodeSelectorTerm().addNewMatchField().withKey("metadata.name")
                        .withOperator("In").withValues(NODE).endMatchField().endNodeSelectorTerm().build()).endAllocation().endStatus().build().getStatus());
        return client.resources(ResourceClaim.class).resource(claim).updateStatus().getMetadata().getUid();
    }

    private String status() {
        return "http://127.0.0.1:" + pod.port("http");
    }

    private String metrics() throws Exception {
        return cluster.get(status() + "/metrics").body();
    }

    private static String text(Object value) {
        if (value instanceof DeviceAttribute attribute) {
            return java.util.stream.Stream.of(attribute.getString(), attribute.getInt(), attribute.getVersion(), attribute.getBool())
                    .filter(java.util.Objects::nonNull).map(String::valueOf).findFirst().orElse("");
        }
        return switch ((HetgpuDra.Value) value) {
            case HetgpuDra.Value.Text text -> text.value();
            case HetgpuDra.Value.Int number -> Long.toString(number.value());
            case HetgpuDra.Value.Version version -> version.value();
        };
    }
}
