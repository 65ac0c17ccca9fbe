package io.hetgpu.deviceplugin.dra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.deviceplugin.FakeGpuSource;
import io.hetgpu.deviceplugin.api.dra.v1.Device;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourceResponse;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.hetgpu.deviceplugin.dra.DraKubeletStandIn.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The DRA plugin as kubelet meets it: registered through the plugin watcher's socket, NodePrepareResources and
 * NodeUnprepareResources over real Unix sockets in both versions, claims read from fabric8's mock API server.
 */
@EnableKubernetesMockClient(crud = true)
class DraPluginTest {

    private static final String NODE = "gpu-node-1";
    private static final String DRIVER = HetgpuDra.DRIVER;
    private static final ObjectMapper JSON = new ObjectMapper();

    KubernetesClient client;

    @TempDir
    Path temp;

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final FakeGpuSource source = new FakeGpuSource(dgx1);
    private DraPlugin.Settings settings;
    private DraPlugin plugin;
    private DraKubeletStandIn kubelet;

    @BeforeEach
    void setUp() throws Exception {
        settings = new DraPlugin.Settings(Files.createDirectory(temp.resolve("plugins_registry")), temp.resolve("plugins"),
                temp.resolve("cdi"), DRIVER, NODE, 0, CardCatalog.defaults());
        plugin = DraPlugin.start(settings, source, client);
        kubelet = new DraKubeletStandIn(settings.registryDir());
    }

    @AfterEach
    void tearDown() {
        kubelet.close();
        plugin.close();
    }

    @Test
    void registersThroughThePluginWatcherAndPreparesAClaimIntoACdiSpec() throws Exception {
        var info = kubelet.register(DRIVER, true, "");
        assertThat(info.getType()).isEqualTo("DRAPlugin");
        assertThat(info.getName()).isEqualTo(DRIVER);
        assertThat(info.getEndpoint()).isEqualTo(temp.resolve("plugins/gpu.hetgpu.io/dra.sock").toString());
        assertThat(info.getSupportedVersionsList()).containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin",
                "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth");
        assertThat(plugin.notRegistered()).isEmpty();

        var uid = allocated("train", result("gpus", NODE, "gpu-0"), result("gpus/v100", NODE, "gpu-3"),
                new DeviceRequestAllocationResultBuilder().withDriver("nic.example.com").withPool(NODE).withDevice("eth0")
                        .withRequest("nic").build());

        var answer = kubelet.prepare(claim("default", "train", uid)).getClaimsOrThrow(uid);

        assertThat(answer.getError()).isEmpty();
        assertThat(answer.getDevicesList()).as("the other driver's device is its own to prepare").extracting(Device::getDeviceName)
                .containsExactly("gpu-0", "gpu-3");
        assertThat(answer.getDevices(1).getRequestNamesList()).as("kubelet matches containers by request, not subrequest")
                .containsExactly("gpus");
        assertThat(answer.getDevices(1).getPoolName()).isEqualTo(NODE);
        assertThat(answer.getDevices(1).getCdiDeviceIdsList()).containsExactly("gpu.hetgpu.io/claim=" + uid + "-gpu-3");

        var spec = JSON.readTree(settings.cdiDir().resolve("gpu.hetgpu.io-claim_" + uid + ".json").toFile());
        assertThat(spec.path("kind").asText()).isEqualTo("gpu.hetgpu.io/claim");
        assertThat(spec.path("cdiVersion").asText()).isEqualTo("0.5.0");
        assertThat(texts(spec.path("devices"), "name")).containsExactly(uid + "-gpu-0", uid + "-gpu-3");
        assertThat(spec.path("devices").get(1).path("containerEdits").path("deviceNodes").get(0).path("path").asText())
                .isEqualTo("/dev/nvidia" + dgx1.device(3).index());
        assertThat(texts(spec.path("containerEdits").path("deviceNodes"), "path")).containsExactly("/dev/nvidiactl", "/dev/nvidia-uvm");
        assertThat(spec.path("containerEdits").path("env").get(0).asText())
                .isEqualTo("NVIDIA_VISIBLE_DEVICES=" + dgx1.device(0).uuid() + "," + dgx1.device(3).uuid());

        var again = kubelet.v1beta1().nodePrepareResources(io.hetgpu.deviceplugin.api.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                .addClaims(io.hetgpu.deviceplugin.api.dra.v1beta1.Claim.newBuilder().setNamespace("default").setName("train").setUid(uid))
                .build()).getClaimsOrThrow(uid);
        assertThat(again.getError()).isEmpty();
        assertThat(again.getDevicesList()).as("v1beta1 answers what v1 answered")
                .extracting(d -> d.getDeviceName() + " " + d.getRequestNamesList() + " " + d.getCdiDeviceIdsList())
                .containsExactlyElementsOf(answer.getDevicesList().stream()
                        .map(d -> d.getDeviceName() + " " + d.getRequestNamesList() + " " + d.getCdiDeviceIdsList()).toList());
        assertThat(kubelet.prepare(claim("default", "train", uid)).getClaimsOrThrow(uid)).as("preparing twice answers the same")
                .isEqualTo(answer);
    }

    @Test
    void aClaimItCannotPrepareGetsItsReasonInItsOwnEntry() {
        kubelet.register(DRIVER, true, "");
        var good = allocated("good", result("gpu", NODE, "gpu-1"));
        var otherPool = allocated("elsewhere", result("gpu", "gpu-node-2", "gpu-1"));
        var notOurs = allocated("too-far", result("gpu", NODE, "gpu-8"));
        var notAllocated = create(new ResourceClaimBuilder().withNewMetadata().withName("waiting").withNamespace("default")
                .endMetadata().build()).getMetadata().getUid();
        source.report(dgx1.device(5).uuid(), DeviceHealth.UNHEALTHY);
        var unhealthy = allocated("broken", result("gpu", NODE, "gpu-5"));

        var answers = kubelet.prepare(claim("default", "good", good), claim("default", "missing", "0000-missing"),
                claim("default", "good", "0000-recreated"), claim("default", "elsewhere", otherPool),
                claim("default", "too-far", notOurs), claim("default", "waiting", notAllocated), claim("default", "broken", unhealthy),
                claim("Bad_Namespace", "x", "0000-bad"), claim("default", "x", "../../etc/passwd")).getClaimsMap();

        assertThat(answers.get(good).getError()).isEmpty();
        assertThat(answers.get(good).getDevicesList()).extracting(Device::getDeviceName).containsExactly("gpu-1");
        assertThat(answers.get("0000-missing").getError()).contains("default/missing").contains("not found");
        assertThat(answers.get("0000-recreated").getError()).contains("has uid \"" + good + "\"").contains("\"0000-recreated\"");
        assertThat(answers.get(otherPool).getError()).contains("status.allocation.devices.results[0].pool is \"gpu-node-2\"");
        assertThat(answers.get(notOurs).getError()).contains(".device \"gpu-8\" is not a GPU of this node");
        assertThat(answers.get(notAllocated).getError()).contains("is not allocated");
        assertThat(answers.get(unhealthy).getError()).contains("gpu-5").contains("unhealthy");
        assertThat(answers.get("0000-bad").getError()).startsWith("claim namespace: ").contains("\"Bad_Namespace\"");
        assertThat(answers.get("../../etc/passwd").getError()).startsWith("claim uid: ");
        assertThat(answers.values().stream().filter(a -> a.getError().isEmpty()).map(NodePrepareResourceResponse::getDevicesCount))
                .containsExactly(1);
        try (var specs = Files.list(settings.cdiDir())) {
            assertThat(specs.map(path -> path.getFileName().toString())).as("a spec for the good claim alone")
                    .containsExactly("gpu.hetgpu.io-claim_" + good + ".json");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRestartedPluginAnswersForClaimsPreparedBeforeAndUnpreparesThem() throws Exception {
        kubelet.register(DRIVER, true, "");
        var uid = allocated("train", result("gpus", NODE, "gpu-2"), result("gpus", NODE, "gpu-6"));
        var prepared = kubelet.prepare(claim("default", "train", uid)).getClaimsOrThrow(uid);
        assertThat(prepared.getError()).isEmpty();
        var spec = settings.cdiDir().resolve("gpu.hetgpu.io-claim_" + uid + ".json");
        assertThat(spec).exists();

        kubelet.close();
        plugin.close();
        assertThat(settings.registryDir().resolve("gpu.hetgpu.io-reg.sock")).as("kubelet drops a stopped driver").doesNotExist();
        // Gone from the API server: a restarted plugin that answers must answer from its checkpoint.
        client.resources(ResourceClaim.class).inNamespace("default").withName("train").delete();
        plugin = DraPlugin.start(settings, new FakeGpuSource(dgx1), client);
        kubelet = new DraKubeletStandIn(settings.registryDir());
        kubelet.register(DRIVER, true, "");
        assertThat(plugin.preparedClaims()).isEqualTo(1);

        assertThat(kubelet.prepare(claim("default", "train", uid)).getClaimsOrThrow(uid)).isEqualTo(prepared);
        assertThat(kubelet.unprepare(claim("default", "train", uid)).getClaimsOrThrow(uid).getError()).isEmpty();
        assertThat(spec).doesNotExist();
        assertThat(plugin.preparedClaims()).isZero();
        assertThat(kubelet.unprepare(claim("default", "never", "0000-never")).getClaimsOrThrow("0000-never").getError())
                .as("an unknown claim is unprepared already").isEmpty();
    }

    @Test
    void kubeletsHealthStreamsSayEachGpusHealthAsTheSliceNamesItAndEndWhenThePluginStops() {
        kubelet.register(DRIVER, true, "");
        var first = kubelet.watchHealth();
        var second = kubelet.watchHealth();
        await().atMost(Duration.ofSeconds(10)).until(() -> !first.messages.isEmpty() && !second.messages.isEmpty());
        var initial = first.messages.get(0);
        assertThat(initial.getDevicesList()).hasSize(8).allSatisfy(device -> {
            assertThat(device.getDevice().getPoolName()).isEqualTo(NODE);
            assertThat(device.getHealth().name()).isEqualTo("HEALTHY");
            assertThat(device.getHealthCheckTimeoutSeconds()).isEqualTo(30);
            assertThat(device.getLastUpdatedTime()).isPositive();
        });
        assertThat(initial.getDevices(5).getDevice().getDeviceName()).isEqualTo("gpu-5");

        source.report(dgx1.device(5).uuid(), DeviceHealth.UNHEALTHY);
        await().atMost(Duration.ofSeconds(10)).until(() -> "UNHEALTHY".equals(first.latest().get("gpu-5"))
                && "UNHEALTHY".equals(second.latest().get("gpu-5")));
        assertThat(first.messages.get(first.messages.size() - 1).getDevices(5).getMessage()).isEqualTo("test");
        source.report(dgx1.device(5).uuid(), DeviceHealth.HEALTHY);
        await().atMost(Duration.ofSeconds(10)).until(() -> "HEALTHY".equals(first.latest().get("gpu-5")));

        plugin.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> !first.end.isEmpty() && !second.end.isEmpty());
        assertThat(first.end).as("kubelet sees the stream end, not a cut connection").isEqualTo("completed");
        assertThat(second.end).isEqualTo("completed");
    }

    @Test
    void aRefusedRegistrationIsWhatHealthSays() {
        assertThat(plugin.notRegistered()).hasValueSatisfying(reason -> assertThat(reason).contains("not registered"));

        kubelet.register(DRIVER, false, "driver gpu.hetgpu.io is already registered");

        assertThat(plugin.notRegistered()).hasValue("kubelet refused DRA driver gpu.hetgpu.io: driver gpu.hetgpu.io is already registered");
        assertThat(plugin.endpoint().registered()).isFalse();
    }

    private String allocated(String name, DeviceRequestAllocationResult... results) {
        return create(new ResourceClaimBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewStatus().withNewAllocation().withNewDevices().withResults(results).endDevices().endAllocation().endStatus()
                .build()).getMetadata().getUid();
    }

    private ResourceClaim create(ResourceClaim claim) {
        var created = client.resources(ResourceClaim.class).resource(claim).create();
        if (claim.getStatus() != null && created.getStatus() == null) {
            created.setStatus(claim.getStatus());
            created = client.resources(ResourceClaim.class).resource(created).updateStatus();
        }
        assertThat(created.getMetadata().getUid()).as("the mock API server gives UIDs").isNotBlank();
        return created;
    }

    private static DeviceRequestAllocationResult result(String request, String pool, String device) {
        return new DeviceRequestAllocationResultBuilder().withDriver(DRIVER).withPool(pool).withDevice(device).withRequest(request).build();
    }

    private static List<String> texts(JsonNode array, String field) {
        return StreamSupport.stream(array.spliterator(), false).map(node -> node.path(field).asText()).toList();
    }
}
