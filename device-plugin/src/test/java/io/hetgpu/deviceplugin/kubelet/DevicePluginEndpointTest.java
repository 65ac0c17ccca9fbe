package io.hetgpu.deviceplugin.kubelet;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hetgpu.deviceplugin.FakeGpuSource;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.Device;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerRequest;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreferredAllocationRequest;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.deviceplugin.status.StatusServer;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The plugin against a kubelet stand-in, over real Unix sockets. */
class DevicePluginEndpointTest {

    private static final String RESOURCE = "nvidia.com/gpu";

    @TempDir
    Path temp;

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final FakeGpuSource source = new FakeGpuSource(dgx1);
    private final GpuInventory inventory = new GpuInventory(dgx1);
    private final List<List<String>> allocations = new CopyOnWriteArrayList<>();
    private UnixSocketTransport transport;
    private KubeletStandIn kubelet;
    private DevicePluginEndpoint endpoint;
    private Path folder;

    @BeforeEach
    void setUp() throws IOException {
        folder = Files.createDirectory(temp.resolve("device-plugins"));
        source.watchHealth(inventory::apply);
        transport = new UnixSocketTransport();
        kubelet = new KubeletStandIn(folder, temp.resolve("pod-resources.sock"));
        var service = new DevicePluginService(inventory, Set.of(DeviceListStrategy.ENVVAR),
                PluginMetrics.unscraped(inventory), allocations::add);
        endpoint = new DevicePluginEndpoint(transport, folder, RESOURCE, service, PluginMetrics.unscraped(inventory));
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        endpoint.close();
        kubelet.close();
        transport.close();
    }

    @Test
    void registersWithVersionSocketNameResourceNameAndOptions() throws Exception {
        kubelet.start();
        endpoint.start();

        var request = kubelet.nextRegistration();
        assertThat(request.getVersion()).isEqualTo("v1beta1");
        assertThat(request.getEndpoint()).isEqualTo("hetgpu-nvidia.com_gpu.sock");
        assertThat(folder.resolve(request.getEndpoint())).exists();
        assertThat(request.getResourceName()).isEqualTo(RESOURCE);
        assertThat(request.getOptions().getGetPreferredAllocationAvailable()).isTrue();
        assertThat(request.getOptions().getPreStartRequired()).isFalse();
        assertThat(endpoint.state()).isEqualTo(DevicePluginEndpoint.State.REGISTERED);
        assertThat(kubelet.plugin().getDevicePluginOptions(Empty.getDefaultInstance()))
                .isEqualTo(request.getOptions());
    }

    @Test
    void preStartContainerAnswersEmptyThoughTheOptionsSayKubeletNeedNotCall() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();

        // Nothing to prepare before a container starts (no reset, no MIG set-up), so the options say
        // not required; a kubelet that calls anyway gets an empty answer, never UNIMPLEMENTED.
        var uuid = dgx1.devices().getFirst().uuid();
        var answer = kubelet.plugin().preStartContainer(PreStartContainerRequest.newBuilder().addDevicesIds(uuid).build());
        assertThat(answer).isEqualTo(PreStartContainerResponse.getDefaultInstance());
        assertThat(kubelet.plugin().getDevicePluginOptions(Empty.getDefaultInstance()).getPreStartRequired()).isFalse();
    }

    @Test
    void listAndWatchSendsEveryGpuWithNumaNodeAndStreamsHealthChanges() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();

        var first = awaitList(list -> true);
        assertThat(first.getDevicesList()).extracting(Device::getID)
                .containsExactlyElementsOf(dgx1.devices().stream().map(GpuDevice::uuid).toList());
        assertThat(first.getDevicesList()).extracting(Device::getHealth).containsOnly("Healthy");
        assertThat(first.getDevices(0).getTopology().getNodesList()).extracting(n -> n.getID()).containsExactly(0L);
        assertThat(first.getDevices(7).getTopology().getNodesList()).extracting(n -> n.getID()).containsExactly(1L);

        var gpu3 = dgx1.device(3).uuid();
        source.report(gpu3, DeviceHealth.UNHEALTHY);
        var sick = awaitList(list -> health(list, gpu3).equals("Unhealthy"));
        assertThat(sick.getDevicesList()).filteredOn(d -> !d.getID().equals(gpu3))
                .extracting(Device::getHealth).containsOnly("Healthy");

        int sent = kubelet.deviceLists().size();
        source.report(gpu3, DeviceHealth.HEALTHY);
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.deviceLists().size() > sent);
        assertThat(kubelet.deviceLists().get(sent)).isEqualTo(first);
    }

    @Test
    void preferredAllocationKeepsNvlinkPairsTogether() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();
        var u = dgx1.devices().stream().map(GpuDevice::uuid).toList();

        // Of GPUs 0, 1, 4, 5 the double-NVLink pairs are 0-4 and 1-5; kubelet's own choice would be 0-1 (one link).
        var answer = kubelet.plugin().getPreferredAllocation(PreferredAllocationRequest.newBuilder()
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
                        .addAllAvailableDeviceIDs(List.of(u.get(0), u.get(1), u.get(4), u.get(5))).setAllocationSize(2))
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
                        .addAllAvailableDeviceIDs(List.of(u.get(0), u.get(1), u.get(4), u.get(5)))
                        .addMustIncludeDeviceIDs(u.get(1)).setAllocationSize(2))
                .build());

        assertThat(answer.getContainerResponses(0).getDeviceIDsList()).containsExactly(u.get(0), u.get(4));
        assertThat(answer.getContainerResponses(1).getDeviceIDsList()).containsExactly(u.get(1), u.get(5));
    }

    @Test
    void aPreferredAllocationRequestOutsideKubeletsContractIsRefusedNamingTheField() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();
        var u = dgx1.devices().stream().map(GpuDevice::uuid).toList();
        record Odd(List<String> available, List<String> mustInclude, int size, String reason) {
        }
        var cases = List.of(
                new Odd(List.of(u.get(0), u.get(1)), List.of(), -1, "allocationSize: expected a number of devices, got -1"),
                new Odd(List.of(u.get(0), u.get(1)), List.of(), 3, "allocationSize: 3 devices asked of 2 available"),
                new Odd(List.of(u.get(0), u.get(0)), List.of(), 2, "allocationSize: 2 devices asked of 1 available"),
                new Odd(List.of(), List.of(), 1, "allocationSize: 1 device asked of 0 available"),
                new Odd(List.of(u.get(0), u.get(1)), List.of(u.get(2)), 2, "mustIncludeDeviceIDs: [" + u.get(2) + "] are not among the available devices"),
                new Odd(List.of(u.get(0), u.get(1), u.get(2)), List.of(u.get(0), u.get(1)), 1, "mustIncludeDeviceIDs: 2 devices for an allocation of 1"));
        for (var odd : cases) {
            var request = PreferredAllocationRequest.newBuilder()
                    .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(List.of(u.get(4), u.get(5)))
                            .setAllocationSize(2))
                    .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(odd.available())
                            .addAllMustIncludeDeviceIDs(odd.mustInclude()).setAllocationSize(odd.size()))
                    .build();
            assertThatThrownBy(() -> kubelet.plugin().getPreferredAllocation(request)).as(odd.reason())
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).isEqualTo("containerRequests[1]." + odd.reason());
                    });
        }
        // Within the contract, the edges: nothing asked, and an ID kubelet offers that the plugin does not know.
        var edges = kubelet.plugin().getPreferredAllocation(PreferredAllocationRequest.newBuilder()
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(List.of(u.get(0))))
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
                        .addAllAvailableDeviceIDs(List.of(u.get(0), "GPU-elsewhere")).setAllocationSize(2))
                .build());
        assertThat(edges.getContainerResponses(0).getDeviceIDsList()).isEmpty();
        assertThat(edges.getContainerResponses(1).getDeviceIDsList()).containsExactlyInAnyOrder(u.get(0), "GPU-elsewhere");
    }

    @Test
    void allocateHandsOverUuidsAndRefusesUnknownOrUnhealthyDevices() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();
        var u = dgx1.devices().stream().map(GpuDevice::uuid).toList();

        var response = kubelet.plugin().allocate(AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(u.get(0)).addDevicesIds(u.get(4)))
                .build());
        assertThat(response.getContainerResponses(0).getEnvsMap())
                .containsExactly(java.util.Map.entry("NVIDIA_VISIBLE_DEVICES", u.get(0) + "," + u.get(4)));
        assertThat(response.getContainerResponses(0).getCdiDevicesList()).isEmpty();
        assertThat(allocations).containsExactly(List.of(u.get(0), u.get(4)));

        assertThatThrownBy(() -> kubelet.plugin().allocate(request(u.get(1), "GPU-not-on-this-node")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("unknown device IDs [GPU-not-on-this-node]");
                });

        source.report(u.get(2), DeviceHealth.UNHEALTHY);
        assertThatThrownBy(() -> kubelet.plugin().allocate(request(u.get(2))))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("unhealthy device IDs [" + u.get(2) + "]");
                });
        assertThat(allocations).hasSize(1);
    }

    @Test
    void servesAFreshSocketAndRegistersAgainWhenKubeletRestarts() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();

        kubelet.restart(); // deletes our socket too

        var again = kubelet.nextRegistration();
        assertThat(again.getEndpoint()).isEqualTo("hetgpu-nvidia.com_gpu.sock");
        assertThat(folder.resolve(again.getEndpoint())).exists();
        assertThat(kubelet.plugin().getDevicePluginOptions(Empty.getDefaultInstance()).getGetPreferredAllocationAvailable()).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED);
        assertThat(kubelet.pendingRegistrations()).isZero();
    }

    @Test
    void waitsForKubeletAndRegistersAsSoonAsItsSocketAppears() throws Exception {
        endpoint.start();
        assertThat(endpoint.state()).isEqualTo(DevicePluginEndpoint.State.WAITING_FOR_KUBELET);

        kubelet.start();

        assertThat(kubelet.nextRegistration().getResourceName()).isEqualTo(RESOURCE);
        await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED);
    }

    @Test
    void closingRemovesTheSocket() throws Exception {
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();

        endpoint.close();

        assertThat(endpoint.socket()).doesNotExist();
        assertThat(endpoint.state()).isEqualTo(DevicePluginEndpoint.State.STOPPED);
    }

    @Test
    void keepsRetryingUntilKubeletAcceptsTheRegistrationThenHealthzTurns200() throws Exception {
        var registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        quickRetries();
        kubelet.refuseRegistrations(6, Status.UNAVAILABLE.withDescription("kubelet is still starting")).start();
        var logged = new ByteArrayOutputStream();
        var stderr = System.err;
        System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err as it is now
        try (var status = new StatusServer(0, registry, () -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED)) {
            endpoint.start();

            // Refused once by start() and once after each wait: only a retry loop that never stops gets past six.
            assertThat(kubelet.nextRegistration().getResourceName()).isEqualTo(RESOURCE);
            assertThat(kubelet.refusedRegistrations()).isEqualTo(6);
            await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED);
            var healthz = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + status.port() + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(healthz.statusCode()).isEqualTo(200);
        } finally {
            System.setErr(stderr);
        }
        // Six refusals, one cause: one warning, naming kubelet's reason.
        assertThat(logged.toString(StandardCharsets.UTF_8).lines().filter(line -> line.contains("Not registered with kubelet")))
                .singleElement().asString()
                .contains("kubelet did not accept the registration: UNAVAILABLE kubelet is still starting");
    }

    @Test
    void watchesTheFolderAgainWhenItIsDeletedAndCreatedAgain() throws Exception {
        quickRetries();
        kubelet.start();
        endpoint.start();
        kubelet.nextRegistration();

        kubelet.stopRegistration();
        deleteRecursively(Files.move(folder, temp.resolve("device-plugins.old"))); // deleted as a whole, as `rm -r` would
        await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.waitingFor().orElse(""),
                cause -> cause.contains("device-plugin folder " + folder + " does not exist"));

        // Back, but with something at our socket's path that cannot be replaced: the cause says what is wrong.
        var blocker = Files.createDirectories(folder.resolve("hetgpu-nvidia.com_gpu.sock"));
        Files.writeString(blocker.resolve("file"), "x");
        await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.waitingFor().orElse(""),
                cause -> cause.contains("cannot serve at " + blocker) && cause.contains("directory not empty"));

        deleteRecursively(blocker);
        kubelet.start();
        assertThat(kubelet.nextRegistration().getEndpoint()).isEqualTo("hetgpu-nvidia.com_gpu.sock");
        await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED);

        // Registered and no retry pending: only the re-armed folder watch can notice this kubelet restart.
        kubelet.restart();
        assertThat(kubelet.nextRegistration().getEndpoint()).isEqualTo("hetgpu-nvidia.com_gpu.sock");
        assertThat(folder.resolve("hetgpu-nvidia.com_gpu.sock")).exists();
    }

    @Test
    void refusesToStartAtASocketPathItCannotReplaceAndSaysWhy() throws Exception {
        var blocker = Files.createDirectories(folder.resolve("hetgpu-nvidia.com_gpu.sock"));
        Files.writeString(blocker.resolve("file"), "x");

        assertThatThrownBy(endpoint::start).isInstanceOf(IOException.class)
                .hasMessageContaining("cannot serve the device plugin API at " + blocker)
                .hasMessageContaining("directory not empty");
    }

    @Test
    void refusesToStartWithoutTheDevicePluginFolder() {
        var missing = new DevicePluginEndpoint(transport, temp.resolve("absent"), RESOURCE,
                new DevicePluginService(inventory, Set.of(DeviceListStrategy.ENVVAR), PluginMetrics.unscraped(inventory), ids -> { }),
                PluginMetrics.unscraped(inventory));
        assertThatThrownBy(missing::start).isInstanceOf(IOException.class).hasMessageContaining("absent").hasMessageContaining("does not exist");
        missing.close();
    }

    @Test
    void aFileWhereTheFolderShouldBeIsSaidToBeOneAndLeftAlone() throws Exception {
        var file = Files.writeString(temp.resolve("mounted-as-a-file"), "not a folder");
        var endpoint = new DevicePluginEndpoint(transport, file, RESOURCE,
                new DevicePluginService(inventory, Set.of(DeviceListStrategy.ENVVAR), PluginMetrics.unscraped(inventory), ids -> { }),
                PluginMetrics.unscraped(inventory));

        assertThatThrownBy(endpoint::start).isInstanceOf(IOException.class)
                .hasMessage("device-plugin folder " + file + " is not a folder (is it mounted from the host?)");
        endpoint.close();

        assertThat(Files.readString(file)).isEqualTo("not a folder");
    }

    /** Retries within milliseconds, so that a test sees many of them without waiting. */
    private void quickRetries() {
        endpoint.close();
        var service = new DevicePluginService(inventory, Set.of(DeviceListStrategy.ENVVAR),
                PluginMetrics.unscraped(inventory), allocations::add);
        endpoint = new DevicePluginEndpoint(transport, folder, RESOURCE, service, PluginMetrics.unscraped(inventory),
                new Backoff(Duration.ofMillis(1), Duration.ofMillis(20), 0.5));
    }

    private static void deleteRecursively(Path path) throws IOException {
        try (var files = Files.walk(path)) {
            for (var file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    private static AllocateRequest request(String... ids) {
        return AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids))).build();
    }

    private static String health(ListAndWatchResponse list, String uuid) {
        return list.getDevicesList().stream().filter(d -> d.getID().equals(uuid)).findFirst().orElseThrow().getHealth();
    }

    private ListAndWatchResponse awaitList(java.util.function.Predicate<ListAndWatchResponse> wanted) {
        return await().atMost(Duration.ofSeconds(10))
                .until(() -> kubelet.deviceLists().stream().filter(wanted).reduce((a, b) -> b), java.util.Optional::isPresent)
                .orElseThrow();
    }
}
