package io.hetgpu.testcluster.kubelet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.dra.DraPlugin;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.api.ApiServer;
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
 * hetgpu's real DRA plugin against the simulated kubelet over Unix sockets: registered by the kubelet's plugin watcher,
 * a bound pod's claim prepared before it runs (its CDI spec on disk) and unprepared when the pod goes, also by a plugin
 * restarted meanwhile; a GPU's health followed through kubelet's health stream (the kubelet's ResourceHealthStatus on).
 */
class SimulatedKubeletDraTest {

    private static final String NODE = "dgx1-dra-1";

    @TempDir
    Path root;

    private ApiServer api;
    private KubernetesClient client;
    private SimulatedKubelet kubelet;
    private DraPlugin plugin;
    private SimulatedGpuSource gpus;
    private KubeletFolders folders;

    @BeforeEach
    void start() throws Exception {
        api = ApiServer.start();
        client = api.newClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
                .withNewStatus().addToCapacity("cpu", new Quantity("64")).addToAllocatable("cpu", new Quantity("64")).endStatus().build()).create();
        folders = KubeletFolders.under(root);
        kubelet = new SimulatedKubelet(NODE, HetgpuKeys.DEFAULT_RESOURCE_NAME, folders, client, true).start();
        plugin = startPlugin();
    }

    @AfterEach
    void stop() throws Exception {
        plugin.close();
        kubelet.close();
        client.close();
        api.close();
    }

    @Test
    void aPodsClaimIsPreparedBeforeItRunsAndUnpreparedWhenItGoes() throws Exception {
        awaitRegistered();
        var uid = allocatedPair();
        runTrainPod();

        assertThat(kubelet.preparedClaims("default/train")).isEqualTo(Map.of("gpus",
                List.of("gpu.hetgpu.io/claim=" + uid + "-gpu-0", "gpu.hetgpu.io/claim=" + uid + "-gpu-3")));
        var spec = cdiSpec(uid);
        assertThat(Files.readString(spec)).contains("\"/dev/nvidia0\"", "\"/dev/nvidia3\"");
        assertThat(plugin.preparedClaims()).isEqualTo(1);

        client.pods().inNamespace("default").withName("train").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(spec) && plugin.preparedClaims() == 0);
    }

    @Test
    void aPluginRestartedWhileItsPodRunsIsRegisteredAgainAndUnpreparesFromItsCheckpoint() throws Exception {
        awaitRegistered();
        var uid = allocatedPair();
        runTrainPod();
        var spec = cdiSpec(uid);
        assertThat(spec).exists();

        plugin.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> !kubelet.draDrivers().contains(HetgpuDra.DRIVER));
        plugin = startPlugin();
        awaitRegistered();
        assertThat(plugin.preparedClaims()).as("claims read back from the checkpoint").isEqualTo(1);

        client.pods().inNamespace("default").withName("train").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(spec) && plugin.preparedClaims() == 0);
    }

    @Test
    void aRegistrationSocketThatAppearsBeforeItsServerAnswersIsTriedAgainUntilItRegisters() throws Exception {
        awaitRegistered();
        plugin.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> !kubelet.draDrivers().contains(HetgpuDra.DRIVER));

        // The socket's name appears in the watched folder while nothing answers behind it yet, and no event follows when
        // the server starts: only kubelet's retry of its desired state can register the driver.
        var elsewhere = Files.createDirectories(root.resolve("registry-elsewhere"));
        var socketName = HetgpuDra.DRIVER + "-reg.sock";
        Files.createSymbolicLink(folders.pluginsRegistry().resolve(socketName), elsewhere.resolve(socketName));
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.draRegistrationsRetried().contains(folders.pluginsRegistry().resolve(socketName)));
        assertThat(kubelet.draDrivers()).doesNotContain(HetgpuDra.DRIVER);

        gpus = SimulatedGpuSource.open("dgx1-v100", NODE);
        plugin = DraPlugin.start(new DraPlugin.Settings(elsewhere, folders.plugins(), folders.cdi(), HetgpuDra.DRIVER, NODE, 0,
                CardCatalog.defaults()), gpus, client);
        awaitRegistered();
        assertThat(kubelet.draRegistrationsRetried()).isEmpty();
    }

    @Test
    void aGpuThatFailsIsUnhealthyInKubeletsHealthStreamUnderTheSlicesNamesAndHealthyAgainOnceItRecovers() {
        awaitRegistered();
        var uid = allocatedPair();
        runTrainPod();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.draDeviceHealth(HetgpuDra.DRIVER).size() == 8);
        assertThat(kubelet.draDeviceHealth(HetgpuDra.DRIVER)).containsEntry(NODE + "/gpu-3", "Healthy");

        var failing = gpus.topology().device(3).uuid();
        gpus.setHealth(failing, DeviceHealth.UNHEALTHY, "XID 79 (GPU has fallen off the bus)");

        await().atMost(Duration.ofSeconds(10)).until(() -> "Unhealthy".equals(kubelet.draDeviceHealth(HetgpuDra.DRIVER).get(NODE + "/gpu-3")));
        assertThat(kubelet.draDeviceHealth(HetgpuDra.DRIVER)).as("the other GPUs stay healthy")
                .containsEntry(NODE + "/gpu-2", "Healthy").containsEntry(NODE + "/gpu-4", "Healthy");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(taintedInSlice()).as("the slice names it the same")
                .containsExactly(NODE + "/gpu-3"));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(podDeviceHealth()).as("the pod holding it shows it")
                .containsExactly("claim:gpus gpu.hetgpu.io/claim=" + uid + "-gpu-0 Healthy",
                        "claim:gpus gpu.hetgpu.io/claim=" + uid + "-gpu-3 Unhealthy"));

        gpus.setHealth(failing, DeviceHealth.HEALTHY, "answered normally for 60 s");

        await().atMost(Duration.ofSeconds(10)).until(() -> "Healthy".equals(kubelet.draDeviceHealth(HetgpuDra.DRIVER).get(NODE + "/gpu-3")));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(podDeviceHealth()).allMatch(entry -> entry.endsWith(" Healthy")));
        plugin.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.draDeviceHealth(HetgpuDra.DRIVER).isEmpty());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(podDeviceHealth()).as("a driver gone tells nothing")
                .hasSize(2).allMatch(entry -> entry.endsWith(" Unknown")));
    }

    /** The train pod's {@code allocatedResourcesStatus}: "claim:gpus <resourceID> <health>" for each device. */
    private List<String> podDeviceHealth() {
        var status = client.pods().inNamespace("default").withName("train").get().getStatus();
        return status.getContainerStatuses().stream().flatMap(container -> container.getAllocatedResourcesStatus().stream())
                .flatMap(resource -> resource.getResources().stream().map(device ->
                        resource.getName() + " " + device.getResourceID() + " " + device.getHealth()))
                .toList();
    }

    /** The devices of hetgpu's slices that carry a taint, as "pool/device". */
    private List<String> taintedInSlice() {
        return client.resources(ResourceSlice.class).list().getItems().stream()
                .filter(slice -> HetgpuDra.DRIVER.equals(slice.getSpec().getDriver()))
                .flatMap(slice -> slice.getSpec().getDevices().stream()
                        .filter(device -> device.getTaints() != null && !device.getTaints().isEmpty())
                        .map(device -> slice.getSpec().getPool().getName() + "/" + device.getName()))
                .toList();
    }

    private DraPlugin startPlugin() throws Exception {
        gpus = SimulatedGpuSource.open("dgx1-v100", NODE);
        return DraPlugin.start(new DraPlugin.Settings(folders.pluginsRegistry(), folders.plugins(), folders.cdi(), HetgpuDra.DRIVER,
                NODE, 0, CardCatalog.defaults()), gpus, client);
    }

    private void awaitRegistered() {
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.draDrivers().contains(HetgpuDra.DRIVER) && plugin.notRegistered().isEmpty());
    }

    /** A claim allocated GPUs 0 and 3 of the node, as kube-scheduler writes it; its UID. */
    private String allocatedPair() {
        var claim = client.resources(ResourceClaim.class).resource(new ResourceClaimBuilder().withNewMetadata().withName("pair")
                .withNamespace("default").endMetadata().build()).create();
        claim.setStatus(new ResourceClaimBuilder().withNewStatus().withNewAllocation().withNewDevices().withResults(
                        new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER).withPool(NODE).withDevice("gpu-0").withRequest("gpus").build(),
                        new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER).withPool(NODE).withDevice("gpu-3").withRequest("gpus").build())
                .endDevices().endAllocation().endStatus().build().getStatus());
        return client.resources(ResourceClaim.class).resource(claim).updateStatus().getMetadata().getUid();
    }

    /** A pod bound to the node using the claim, once the kubelet runs it. */
    private void runTrainPod() {
        client.pods().resource(new PodBuilder().withNewMetadata().withName("train").withNamespace("default").endMetadata()
                .withNewSpec().withNodeName(NODE).addNewResourceClaim().withName("gpus").withResourceClaimName("pair").endResourceClaim()
                .addNewContainer().withName("main").withImage("trainer").withNewResources().addNewClaim().withName("gpus").endClaim()
                .endResources().endContainer().endSpec().build()).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            var status = client.pods().inNamespace("default").withName("train").get().getStatus();
            return status != null && "Running".equals(status.getPhase());
        });
    }

    private Path cdiSpec(String claimUid) {
        return folders.cdi().resolve("gpu.hetgpu.io-claim_" + claimUid + ".json");
    }
}
