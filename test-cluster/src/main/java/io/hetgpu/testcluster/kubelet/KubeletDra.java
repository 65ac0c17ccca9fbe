package io.hetgpu.testcluster.kubelet;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.ResourceHealthBuilder;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.ResourceStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hetgpu.deviceplugin.api.dra.v1.Claim;
import io.hetgpu.deviceplugin.api.dra.v1.DRAPluginGrpc;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesRequest;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.InfoRequest;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationGrpc;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationStatus;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The simulated kubelet's DRA manager, speaking kubelet's protocols over real Unix sockets: its plugin watcher registers
 * each DRA driver whose socket appears in the plugin registry folder (GetInfo, then NotifyRegistrationStatus; a socket
 * that does not answer yet is tried again each second, as kubelet's plugin manager reconciles), and a
 * pod's claims are prepared by the drivers their allocation names before the pod runs, and unprepared once no pod on
 * the node uses them. Calls v1 where a driver offers it, else v1beta1, as kubelet does. Claims of drivers with no
 * plugin here (NVIDIA's, published by the test cluster without one) are left alone, as before.
 */
final class KubeletDra implements AutoCloseable {

    private static final System.Logger log = System.getLogger(KubeletDra.class.getName());
    static final String TYPE = "DRAPlugin";
    static final String V1 = "v1.DRAPlugin";
    static final String V1BETA1 = "v1beta1.DRAPlugin";
    static final String HEALTH_V1 = "v1.DRAResourceHealth";
    static final String HEALTH_V1ALPHA1 = "v1alpha1.DRAResourceHealth";

    /**
     * A registered driver: its channel, the service version kubelet chose, the registration socket it came from, and
     * its health stream, if kubelet opened one (cancelled when the driver goes).
     */
    private record Driver(ManagedChannel channel, boolean v1, Path socket, Optional<HealthWatch<?, ?>> health) { }

    private final String nodeName;
    private final Path registry;
    private final UnixSocketTransport transport;
    private final KubernetesClient client;
    private final Map<String, Driver> drivers = new ConcurrentHashMap<>();
    /** kubelet's {@code ResourceHealthStatus} feature gate: whether it opens the drivers' health streams. */
    private final boolean resourceHealthStatus;
    /** Told whenever a health stream changed what this kubelet knows (kubelet then syncs the pods' statuses). */
    private volatile Runnable healthChanged = () -> { };

    /** Prepared claims (by UID): the claim, its drivers, the pods on this node using it. Confined to the pod worker. */
    private final Map<String, Prepared> prepared = new LinkedHashMap<>();
    private WatchService watch;
    private Thread watcher;
    /** Registration sockets whose GetInfo failed (not refused): tried again every {@link #RETRY_EVERY}. */
    private final Set<Path> unreachable = ConcurrentHashMap.newKeySet();
    /** kubelet's plugin manager reconciles its desired state of sockets once a second. */
    private static final java.time.Duration RETRY_EVERY = java.time.Duration.ofSeconds(1);

    private record Prepared(Claim claim, Set<String> drivers, Set<String> pods) { }

    /** A device a driver prepared for a claim, as kubelet's claim info holds it. */
    record PreparedDevice(String driver, String pool, String device, List<String> cdiIds) {

        /** How the pod status names it: its first CDI ID, else driver/pool/device (kubelet's rule). */
        String resourceId() {
            return cdiIds.isEmpty() ? driver + "/" + pool + "/" + device : cdiIds.get(0);
        }
    }

    /** A pod's claims could not be prepared; kubelet keeps the pod from starting. */
    static final class PrepareException extends Exception {
        PrepareException(String message) {
            super(message);
        }
    }

    KubeletDra(String nodeName, Path registry, UnixSocketTransport transport, KubernetesClient client, boolean resourceHealthStatus) {
        this.nodeName = nodeName;
        this.resourceHealthStatus = resourceHealthStatus;
        this.registry = registry;
        this.transport = transport;
        this.client = client;
    }

    void start() throws IOException {
        watch = registry.getFileSystem().newWatchService();
        registry.register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
        try (var files = Files.list(registry)) {
            files.forEach(this::register);
        }
        watcher = Thread.ofPlatform().daemon().name("plugin-watcher-" + nodeName).start(() -> {
            try {
                while (true) {
                    var key = watch.poll(RETRY_EVERY.toMillis(), TimeUnit.MILLISECONDS);
                    if (key != null) {
                        for (var event : key.pollEvents()) {
                            if (event.context() instanceof Path name) {
                                if (event.kind() == StandardWatchEventKinds.ENTRY_DELETE) {
                                    unreachable.remove(registry.resolve(name));
                                    deregister(registry.resolve(name));
                                } else {
                                    register(registry.resolve(name));
                                }
                            }
                        }
                        key.reset();
                    }
                    for (var socket : List.copyOf(unreachable)) {
                        register(socket);
                    }
                }
            } catch (InterruptedException | ClosedWatchServiceException e) {
                // closing
            }
        });
    }

    /** The drivers registered, by name. */
    Set<String> drivers() {
        return Set.copyOf(drivers.keySet());
    }

    /** The registration sockets that did not answer and are being tried again. */
    Set<Path> retrying() {
        return Set.copyOf(unreachable);
    }

    private void register(Path socket) {
        if (!socket.getFileName().toString().endsWith(".sock")) {
            return;
        }
        var channel = transport.connect(socket);
        try {
            var registration = RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
            var info = registration.getInfo(InfoRequest.getDefaultInstance());
            var versions = info.getSupportedVersionsList();
            String error = !TYPE.equals(info.getType()) ? "type " + info.getType() + " is not " + TYPE
                    : !versions.contains(V1) && !versions.contains(V1BETA1) ? "none of " + versions + " is supported"
                    : drivers.containsKey(info.getName()) ? "driver " + info.getName() + " is already registered" : "";
            if (error.isEmpty()) {
                var draChannel = transport.connect(Path.of(info.getEndpoint()));
                var previous = drivers.put(info.getName(), new Driver(draChannel, versions.contains(V1), socket,
                        watchHealth(draChannel, versions)));
                if (previous != null) {
                    forget(previous);
                }
            }
            registration.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(error.isEmpty()).setError(error).build());
            unreachable.remove(socket);
        } catch (RuntimeException e) {
            // The socket can appear before its server answers (a plugin restarting): kubelet's reconciler tries every
            // socket of its desired state again each second until it registers or goes away, and so does this one.
            if (unreachable.add(socket)) {
                log.log(System.Logger.Level.WARNING, "Plugin at {0} not registered on {1}, trying again: {2}", socket, nodeName, e.toString());
            }
        } finally {
            channel.shutdownNow();
        }
    }

    /**
     * A registration socket went away (the plugin stopped or is restarting): the driver it registered is forgotten, as
     * kubelet's plugin watcher deregisters it, so the plugin's next socket registers it again. Claims prepared stay
     * prepared: the restarted plugin unprepares them from its checkpoint.
     */
    private void deregister(Path socket) {
        for (var entry : drivers.entrySet()) {
            if (entry.getValue().socket().equals(socket) && drivers.remove(entry.getKey(), entry.getValue())) {
                forget(entry.getValue());
            }
        }
    }

    private void forget(Driver driver) {
        driver.health().ifPresent(HealthWatch::cancel);
        driver.channel().shutdownNow();
    }

    /**
     * Opens the driver's health stream as kubelet does with {@code ResourceHealthStatus} on: from 1.37 only to a driver
     * whose registration lists a health service, the newest version it lists. Each message sets the health of the
     * devices it names; the stream's end clears the driver's, as kubelet's health cache is cleared. kubelet opens an
     * ended stream again every 5 s; this one waits for the driver's next registration.
     */
    private Optional<HealthWatch<?, ?>> watchHealth(ManagedChannel channel, List<String> versions) {
        if (!resourceHealthStatus) {
            return Optional.empty();
        }
        if (versions.contains(HEALTH_V1)) {
            var watch = new HealthWatch<io.hetgpu.deviceplugin.api.drahealth.v1.NodeWatchResourcesRequest,
                    io.hetgpu.deviceplugin.api.drahealth.v1.NodeWatchResourcesResponse>((devices, message) ->
                    message.getDevicesList().forEach(d -> devices.put(d.getDevice().getPoolName() + "/"
                            + d.getDevice().getDeviceName(), label(d.getHealth().name()))), () -> healthChanged.run());
            io.hetgpu.deviceplugin.api.drahealth.v1.DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
                    io.hetgpu.deviceplugin.api.drahealth.v1.NodeWatchResourcesRequest.getDefaultInstance(), watch);
            return Optional.of(watch);
        }
        if (versions.contains(HEALTH_V1ALPHA1)) {
            var watch = new HealthWatch<io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesRequest,
                    io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse>((devices, message) ->
                    message.getDevicesList().forEach(d -> devices.put(d.getDevice().getPoolName() + "/"
                            + d.getDevice().getDeviceName(), label(d.getHealth().name()))), () -> healthChanged.run());
            io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
                    io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(), watch);
            return Optional.of(watch);
        }
        return Optional.empty();
    }

    /** Whom to tell when a device's health as this kubelet knows it changes. */
    void onHealthChange(Runnable listener) {
        healthChanged = listener;
    }

    /** Whether kubelet's {@code ResourceHealthStatus} gate is on here: pod statuses then carry allocatedResourcesStatus. */
    boolean resourceHealthStatus() {
        return resourceHealthStatus;
    }

    /**
     * Each container's {@code allocatedResourcesStatus}, as kubelet writes it: one entry per claim the container uses
     * ({@code claim:<name>} or {@code claim:<name>/<request>}), with every device prepared for that claim and its health
     * as last heard (Unknown without a stream); containers without claims are left out.
     */
    List<ContainerStatus> allocatedResourcesStatus(Pod pod, Map<String, List<PreparedDevice>> devices) {
        var statuses = new ArrayList<ContainerStatus>();
        for (var container : pod.getSpec().getContainers()) {
            var claims = container.getResources() == null ? null : container.getResources().getClaims();
            if (claims == null || claims.isEmpty()) {
                continue;
            }
            var resources = new ArrayList<ResourceStatus>();
            for (var claim : claims) {
                var prepared = devices.getOrDefault(claim.getName(), List.of());
                if (prepared.isEmpty()) {
                    continue; // kubelet leaves out an entry with no devices
                }
                resources.add(new ResourceStatusBuilder()
                        .withName("claim:" + claim.getName() + (claim.getRequest() == null || claim.getRequest().isEmpty() ? "" : "/" + claim.getRequest()))
                        .withResources(prepared.stream().map(device -> new ResourceHealthBuilder().withResourceID(device.resourceId())
                                .withHealth(deviceHealth(device.driver()).getOrDefault(device.pool() + "/" + device.device(), "Unknown"))
                                .build()).toList())
                        .build());
            }
            statuses.add(new ContainerStatusBuilder().withName(container.getName()).withAllocatedResourcesStatus(resources).build());
        }
        return statuses;
    }

    /** The health enum's name as the pod status spells it. */
    private static String label(String health) {
        return switch (health) {
            case "HEALTHY" -> "Healthy";
            case "UNHEALTHY" -> "Unhealthy";
            default -> "Unknown";
        };
    }

    /**
     * The devices' health as this kubelet last heard it from {@code driverName} ("pool/device" → Healthy, Unhealthy,
     * Unknown); empty when it has no open health stream to the driver.
     */
    Map<String, String> deviceHealth(String driverName) {
        var driver = drivers.get(driverName);
        return driver == null || driver.health().isEmpty() ? Map.of() : Map.copyOf(driver.health().get().devices);
    }

    /** One health stream, as kubelet's health cache holds what it said: the devices it named, all gone when it ends. */
    private static final class HealthWatch<Q, T> implements ClientResponseObserver<Q, T> {

        private final java.util.function.BiConsumer<Map<String, String>, T> apply;
        private final Runnable changed;
        private final Map<String, String> devices = new ConcurrentHashMap<>();
        private volatile ClientCallStreamObserver<Q> call;
        private volatile boolean ended;

        HealthWatch(java.util.function.BiConsumer<Map<String, String>, T> apply, Runnable changed) {
            this.apply = apply;
            this.changed = changed;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(T message) {
            if (!ended) {
                var before = Map.copyOf(devices);
                apply.accept(devices, message);
                if (!devices.equals(before)) {
                    changed.run();
                }
            }
        }

        @Override
        public void onError(Throwable error) {
            ended();
        }

        @Override
        public void onCompleted() {
            ended();
        }

        void cancel() {
            ended();
            call.cancel("driver deregistered", null);
        }

        private void ended() {
            ended = true;
            if (!devices.isEmpty()) {
                devices.clear();
                changed.run();
            }
        }
    }

    /**
     * Prepares the pod's claims with the drivers registered here, each claim once however many pods use it, and answers
     * the CDI device IDs the container runtime would inject, by the pod's claim name.
     */
    Map<String, List<PreparedDevice>> prepare(Pod pod) throws PrepareException {
        var cdi = new LinkedHashMap<String, List<PreparedDevice>>();
        if (drivers.isEmpty()) {
            return cdi; // no DRA driver runs here: the node's claims, if any, are NVIDIA's, which this kubelet does not prepare
        }
        var podKey = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        for (var entry : Objects.requireNonNullElse(pod.getSpec().getResourceClaims(), List.<PodResourceClaim>of())) {
            var claimName = claimName(pod, entry);
            if (claimName == null) {
                throw new PrepareException("claim " + entry.getName() + " has no ResourceClaim yet");
            }
            var claim = client.resources(ResourceClaim.class).inNamespace(pod.getMetadata().getNamespace()).withName(claimName).get();
            if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
                throw new PrepareException("claim " + claimName + " is not allocated");
            }
            var ours = new LinkedHashSet<String>();
            for (var result : Objects.requireNonNullElse(claim.getStatus().getAllocation().getDevices().getResults(),
                    List.<DeviceRequestAllocationResult>of())) {
                if (drivers.containsKey(result.getDriver())) {
                    ours.add(result.getDriver());
                }
            }
            var ref = Claim.newBuilder().setNamespace(pod.getMetadata().getNamespace()).setName(claimName)
                    .setUid(claim.getMetadata().getUid()).build();
            var ids = new ArrayList<PreparedDevice>();
            for (var driver : ours) {
                ids.addAll(prepare(driver, ref));
            }
            prepared.computeIfAbsent(ref.getUid(), uid -> new Prepared(ref, new LinkedHashSet<>(ours), new LinkedHashSet<>()))
                    .pods().add(podKey);
            cdi.put(entry.getName(), List.copyOf(ids));
        }
        return cdi;
    }

    private List<PreparedDevice> prepare(String driverName, Claim claim) throws PrepareException {
        var driver = drivers.get(driverName);
        if (driver.v1()) {
            var answer = DRAPluginGrpc.newBlockingStub(driver.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .nodePrepareResources(NodePrepareResourcesRequest.newBuilder().addClaims(claim).build())
                    .getClaimsOrDefault(claim.getUid(), null);
            if (answer == null || !answer.getError().isEmpty()) {
                throw new PrepareException(driverName + " did not prepare claim " + claim.getName() + ": "
                        + (answer == null ? "no answer for it" : answer.getError()));
            }
            return answer.getDevicesList().stream().map(device -> new PreparedDevice(driverName, device.getPoolName(),
                    device.getDeviceName(), List.copyOf(device.getCdiDeviceIdsList()))).toList();
        }
        var beta = io.hetgpu.deviceplugin.api.dra.v1beta1.DRAPluginGrpc.newBlockingStub(driver.channel())
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .nodePrepareResources(io.hetgpu.deviceplugin.api.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                        .addClaims(io.hetgpu.deviceplugin.api.dra.v1beta1.Claim.newBuilder().setNamespace(claim.getNamespace())
                                .setName(claim.getName()).setUid(claim.getUid()))
                        .build())
                .getClaimsOrDefault(claim.getUid(), null);
        if (beta == null || !beta.getError().isEmpty()) {
            throw new PrepareException(driverName + " did not prepare claim " + claim.getName() + ": "
                    + (beta == null ? "no answer for it" : beta.getError()));
        }
        return beta.getDevicesList().stream().map(device -> new PreparedDevice(driverName, device.getPoolName(),
                device.getDeviceName(), List.copyOf(device.getCdiDeviceIdsList()))).toList();
    }

    /** The pod ended or was deleted: its claims no other pod here uses are unprepared. */
    void release(String podKey) {
        for (var it = prepared.values().iterator(); it.hasNext(); ) {
            var claim = it.next();
            if (!claim.pods().remove(podKey) || !claim.pods().isEmpty()) {
                continue;
            }
            for (var driverName : claim.drivers()) {
                var driver = drivers.get(driverName);
                if (driver == null) {
                    continue;
                }
                try {
                    var request = NodeUnprepareResourcesRequest.newBuilder().addClaims(claim.claim()).build();
                    var error = DRAPluginGrpc.newBlockingStub(driver.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
                            .nodeUnprepareResources(request).getClaimsOrThrow(claim.claim().getUid()).getError();
                    if (!error.isEmpty()) {
                        log.log(System.Logger.Level.WARNING, "{0} did not unprepare {1}: {2}", driverName, claim.claim().getName(), error);
                    }
                } catch (RuntimeException e) {
                    log.log(System.Logger.Level.WARNING, "{0} did not unprepare {1}: {2}", driverName, claim.claim().getName(), e.toString());
                }
            }
            it.remove();
        }
    }

    /** The claim's name: the one named in the pod, or the one made from its template ({@code status.resourceClaimStatuses}). */
    private static String claimName(Pod pod, PodResourceClaim entry) {
        if (entry.getResourceClaimName() != null) {
            return entry.getResourceClaimName();
        }
        var statuses = pod.getStatus() == null ? null : pod.getStatus().getResourceClaimStatuses();
        return Objects.requireNonNullElse(statuses, List.<PodResourceClaimStatus>of()).stream()
                .filter(status -> entry.getName().equals(status.getName())).map(PodResourceClaimStatus::getResourceClaimName)
                .filter(Objects::nonNull).findFirst().orElse(null);
    }

    @Override
    public void close() {
        if (watcher != null) {
            watcher.interrupt();
        }
        try {
            if (watch != null) {
                watch.close();
            }
        } catch (IOException e) {
            // closing anyway
        }
        drivers.values().forEach(this::forget);
    }
}
