package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.hetgpu.deviceplugin.training.StandInApiServer;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.manifests.RenderedManifests;
import io.hetgpu.testcluster.manifests.ExternalTool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The two images `./hetgpu images` builds (OCI archives in target/images), each run by Debian's podman the way the
 * simulated install runs its container: the user and group, read-only root filesystem, dropped capabilities, mounts,
 * environment and arguments of the rendered workload. The device plugin registers with the test cluster's kubelet
 * and publishes its node, and reaches an API server over TLS as in a pod, trusting its cluster's CA; the extender syncs
 * and becomes ready. Run by `./hetgpu images test` (and .ci/run), not
 * by `./hetgpu test`: the images take minutes to build.
 */
@Tag("images")
@ExtendWith(ShippedClusterExtension.class)
class ImagesTest {

    private final ShippedCluster cluster;

    ImagesTest(ShippedCluster cluster) {
        this.cluster = cluster;
    }

    private static final Duration START = Duration.ofSeconds(90);
    private static final ExternalTool SKOPEO = new ExternalTool("skopeo", "the image tests read each archive's configuration "
            + "with it: install Debian's skopeo package; `./hetgpu images test` and .ci/run install it");


    @Test
    void theDevicePluginImageRegistersWithKubeletAndPublishesItsNode() throws Exception {
        var pod = cluster.pluginPod();
        var security = pluginPodSecurity();
        try (var plugin = ContainerEngine.run(archive(DEVICE_PLUGIN), "hetgpu-test-device-plugin-" + ProcessHandle.current().pid(), pod,
                security, apiServerEnv())) {
            await("the device plugin in its container registers with kubelet and writes its Node").atMost(START).untilAsserted(() -> {
                assertThat(plugin.isRunning()).as(plugin::describe).isTrue();
                assertThat(cluster.kubelet.registrations()).as(plugin::describe).isNotEmpty();
                var node = cluster.client.nodes().withName(ShippedCluster.GPU_NODE).get();
                assertThat(node.getMetadata().getLabels()).as(plugin::describe).containsEntry(HetgpuKeys.LABEL_GPU_COUNT, "8");
                assertThat(node.getMetadata().getAnnotations()).containsKey(HetgpuKeys.ANNOTATION_INVENTORY);
            });
            assertThat(cluster.get("http://127.0.0.1:" + pod.port("http") + "/healthz").statusCode()).isEqualTo(200);
            // A cache the JVM cannot use is a warning from its "aot" log (a mismatched option, a changed jar), then a slower start.
            assertThat(plugin.logs()).as("the AOT cache and the JVM options of the image are accepted")
                    .doesNotContain("[aot]").doesNotContain("AOT cache").doesNotContain("Exception");
        }
    }

    /**
     * The image as {@code manifests/overlays/dra} runs it: hetgpu's DRA driver on its own AOT cache (the DaemonSet's
     * command, the image's second training run), registered by kubelet's plugin watcher and its ResourceSlice published.
     * The node has no GPU, so the driver's NVML source is the simulated DGX A100's.
     */
    @Test
    void theDraDriverImageRegistersWithThePluginWatcherOnItsOwnAotCache() throws Exception {
        var pod = cluster.draPluginPod();
        assertThat(pod.container().getCommand()).as("the DaemonSet names the DRA driver's cache").contains("-XX:AOTCache=/opt/hetgpu/hetgpu-dra.aot");
        try (var driver = ContainerEngine.run(archive(DEVICE_PLUGIN), "hetgpu-test-dra-driver-" + ProcessHandle.current().pid(), pod,
                podSecurity(RenderedManifests.draInstall(), "hetgpu-device-plugin"), apiServerEnv(), Map.of(), args -> args.stream()
                        .map(arg -> arg.equals("--gpu-source=nvml") ? "--gpu-source=simulated:dgx-a100" : arg).toList())) {
            await("the DRA driver in its container registers with kubelet's plugin watcher and publishes its slice").atMost(START)
                    .untilAsserted(() -> {
                        assertThat(driver.isRunning()).as(driver::describe).isTrue();
                        assertThat(cluster.kubelet.draDrivers()).as(driver::describe).contains(HetgpuDra.DRIVER);
                        assertThat(cluster.client.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class).list().getItems())
                                .as(driver::describe).anySatisfy(slice -> {
                                    assertThat(slice.getSpec().getDriver()).isEqualTo(HetgpuDra.DRIVER);
                                    assertThat(slice.getSpec().getNodeName()).isEqualTo(ShippedCluster.GPU_NODE);
                                    assertThat(slice.getSpec().getDevices()).hasSize(8);
                                });
                    });
            assertThat(driver.logs()).as("the DRA driver's AOT cache and the JVM options of its command are accepted")
                    .doesNotContain("[aot]").doesNotContain("AOT cache").doesNotContain("Exception");
        }
    }

    /**
     * As in a pod: the API server at the address kubelet gives every container, its certificate checked against the
     * service account's {@code ca.crt}, mounted where kubelet mounts it, with the image's runtime and read-only root.
     */
    @Test
    void theDevicePluginImagePublishesOverTlsTrustingItsServiceAccountsCa(@TempDir Path folder) throws Exception {
        try (var apiServer = StandInApiServer.started(Files.createDirectory(folder.resolve("api-server")), ShippedCluster.GPU_NODE);
             var plugin = runAsInAPod(apiServer, serviceAccount(folder, apiServer.caFile()), "tls", Map.of())) {
            await("the device plugin in its container publishes its Node over TLS").atMost(START).untilAsserted(() -> {
                assertThat(plugin.isRunning()).as(plugin::describe).isTrue();
                assertThat(apiServer.nodeLabelsAndAnnotations()).as(plugin::describe)
                        .containsEntry(HetgpuKeys.LABEL_GPU_COUNT, "8").containsKey(HetgpuKeys.ANNOTATION_INVENTORY);
            });
            assertThat(plugin.logs()).contains("Publishing the GPU inventory on node " + ShippedCluster.GPU_NODE).doesNotContain("Exception");
        }
    }

    @Test
    void theDevicePluginImageRefusesAnApiServerItsClusterCaDidNotSign(@TempDir Path folder) throws Exception {
        try (var apiServer = StandInApiServer.started(Files.createDirectory(folder.resolve("api-server")), ShippedCluster.GPU_NODE);
             var impostor = StandInApiServer.started(Files.createDirectory(folder.resolve("impostor")), ShippedCluster.GPU_NODE);
             // fabric8 retries a failed handshake ten times over some 100 s before it says so; once is enough here.
             var plugin = runAsInAPod(impostor, serviceAccount(folder, apiServer.caFile()), "impostor",
                     Map.of("KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT", "0"))) {
            await("the device plugin in its container refuses the impostor's certificate").atMost(START).untilAsserted(() ->
                    assertThat(plugin.logs()).contains("Cannot publish the GPU inventory on node " + ShippedCluster.GPU_NODE));
            assertThat(plugin.isRunning()).as(plugin::describe).isTrue();
            assertThat(impostor.nodeLabelsAndAnnotations()).isEmpty();
        }
    }

    private ContainerEngine.Running runAsInAPod(StandInApiServer apiServer, Path serviceAccount, String suffix, Map<String, String> env) {
        var security = pluginPodSecurity();
        var address = apiServer.podEnvironment();
        var environment = new HashMap<>(env);
        environment.put("KUBERNETES_SERVICE_HOST", address.get("KUBERNETES_SERVICE_HOST"));
        environment.put("KUBERNETES_SERVICE_PORT", address.get("KUBERNETES_SERVICE_PORT"));
        return ContainerEngine.run(archive(DEVICE_PLUGIN), "hetgpu-test-device-plugin-" + suffix + "-" + ProcessHandle.current().pid(),
                cluster.pluginPod(), security, environment, Map.of(serviceAccount, "/var/run/secrets/kubernetes.io/serviceaccount"));
    }

    /** The simulated install's device plugin pod's securityContext. */
    private PodSecurityContext pluginPodSecurity() {
        return podSecurity(cluster.manifests, ShippedCluster.SIMULATED_PLUGIN);
    }

    /** The securityContext of the pods of DaemonSet {@code name} among {@code manifests}. */
    private static PodSecurityContext podSecurity(List<HasMetadata> manifests, String name) {
        return manifests.stream().filter(o -> o instanceof DaemonSet d && d.getMetadata().getName().equals(name))
                .map(o -> ((DaemonSet) o).getSpec().getTemplate().getSpec().getSecurityContext()).findFirst().orElseThrow();
    }

        /** What kubelet mounts for a pod's service account: the cluster's CA, a token, the namespace. */
    private static Path serviceAccount(Path folder, Path clusterCa) throws IOException {
        var serviceAccount = Files.createDirectory(folder.resolve("service-account"));
        Files.copy(clusterCa, serviceAccount.resolve("ca.crt"));
        Files.writeString(serviceAccount.resolve("token"), "a-token-the-stand-in-does-not-check");
        Files.writeString(serviceAccount.resolve("namespace"), "hetgpu-system");
        return serviceAccount;
    }

    @Test
    void theExtenderImageSyncsAndBecomesReady() throws Exception {
        var pod = cluster.extenderPod();
        var security = cluster.manifests.stream().filter(o -> o instanceof Deployment d && d.getMetadata().getName().equals("hetgpu-scheduler"))
                .map(o -> ((Deployment) o).getSpec().getTemplate().getSpec().getSecurityContext()).findFirst().orElseThrow();
        try (var extender = ContainerEngine.run(archive(SCHEDULER_EXTENDER), "hetgpu-test-extender-" + ProcessHandle.current().pid(), pod,
                security, apiServerEnv())) {
            var probes = "http://127.0.0.1:" + pod.port("metrics");
            await("the extender in its container syncs (readinessProbe /readyz)").atMost(START).ignoreExceptions().untilAsserted(() -> {
                assertThat(extender.isRunning()).as(extender::describe).isTrue();
                assertThat(cluster.get(probes + "/readyz").statusCode()).as(extender::describe).isEqualTo(200);
            });
            var filter = cluster.post("http://127.0.0.1:" + pod.flagPort("--port") + "/filter", """
                    {"Pod": {"metadata": {"name": "serving", "namespace": "default", "uid": "uid-serving"},
                             "spec": {"schedulerName": "hetgpu-scheduler", "containers": [{"name": "main", "image": "busybox"}]}},
                     "NodeNames": ["%s"]}""".formatted(ShippedCluster.CPU_NODE));
            assertThat(filter.path("NodeNames").toString()).as(filter::toString).contains(ShippedCluster.CPU_NODE);
            assertThat(extender.logs()).doesNotContain("Exception");
        }
    }

    /** The archive's image configuration: the version, the user the Dockerfile sets, the entrypoint. */
    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void eachImageCarriesTheVersionAndItsDockerfilesEntrypoint(ShippedArtifacts program) throws IOException {
        var inspect = SKOPEO.run(List.of("inspect", "--config", "oci-archive:" + archive(program).toAbsolutePath()), 120);
        assertThat(inspect.exitCode()).as(inspect.stderr()).isZero();
        var config = new ObjectMapper().readTree(inspect.stdout()).path("config");

        assertThat(config.path("Labels").path("org.opencontainers.image.version").asText()).isEqualTo(VersionAgreementTest.revision());
        var entrypoint = new java.util.ArrayList<String>();
        config.path("Entrypoint").forEach(word -> entrypoint.add(word.asText()));
        assertThat(entrypoint).isEqualTo(program.entrypoint());
        assertThat(config.path("User").asText()).isEqualTo(program == DEVICE_PLUGIN ? "0:0" : "10001:10001");
    }

    /** As in ShippedCluster.start: the in-process API server by URL instead of the service account's (plain HTTP). */
    private Map<String, String> apiServerEnv() {
        return Map.of("KUBERNETES_MASTER", cluster.api.url(), "KUBERNETES_AUTH_TRYKUBECONFIG", "false",
                "KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
    }

    private static Path archive(ShippedArtifacts program) {
        var archive = ShippedArtifacts.checkout().resolve("target/images")
                .resolve("hetgpu-" + program.module() + "-" + VersionAgreementTest.revision() + ".oci.tar");
        if (!Files.isRegularFile(archive)) {
            throw new AssertionError(archive + " is missing: build the images first (./hetgpu images)");
        }
        return archive;
    }

}
