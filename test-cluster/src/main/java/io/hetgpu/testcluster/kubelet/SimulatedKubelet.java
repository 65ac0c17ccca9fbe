package io.hetgpu.testcluster.kubelet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerDevices;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerResources;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesRequest;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResources;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResourcesListerGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.kubelet.KubeletDevices;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.testcluster.scheduler.ApiObjects;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet of one simulated node, speaking kubelet's real protocols over real Unix sockets: it
 * serves Registration and PodResources v1, takes the registering device plugin's ListAndWatch into the
 * Node's capacity and allocatable, and for every pod bound to its node asks the plugin
 * GetPreferredAllocation (when the plugin offers it) then Allocate, records the devices (PodResources, and the pod annotation
 * {@value #DEVICES_ANNOTATION}) and marks the pod Running. It can restart (deleting every socket in
 * the device-plugin folder, as kubelet does) and vanish. DRA drivers register through its plugin watcher
 * ({@link KubeletDra}); a pod's claims are prepared by them before it runs, and unprepared when it ends.
 *
 * <p>What it leaves out: containers, cgroups, probes, CPU and memory managers; pods run until deleted, or until a test
 * ends one ({@link #end}), as kubelet reports a job that exited.
 */
public final class SimulatedKubelet implements AutoCloseable {

    /** Where the simulated kubelet shows a pod's devices; real kubelets expose them through PodResources only. */
    public static final String DEVICES_ANNOTATION = "testcluster.hetgpu.io/devices";

    private static final System.Logger log = System.getLogger(SimulatedKubelet.class.getName());

    private final String nodeName;
    private final String resourceName;
    private final KubeletFolders folders;
    private final KubernetesClient client;
    private final UnixSocketTransport transport = new UnixSocketTransport();
    /** Allocation and status writes, one at a time, as kubelet's pod workers admit pods. */
    private final ExecutorService podWorker;
    private final Map<String, Map<String, List<String>>> devicesByPod = new ConcurrentHashMap<>();
    /** The environment the plugin's Allocate answer gave each container, by pod key and container. */
    private final Map<String, Map<String, Map<String, String>>> envByPod = new ConcurrentHashMap<>();
    private final Map<String, String> deviceHealth = new ConcurrentHashMap<>();
    private final List<RegisterRequest> registrations = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final KubeletDra dra;
    /** The devices the DRA drivers prepared for each pod, by pod key and the pod's claim name. */
    private final Map<String, Map<String, List<KubeletDra.PreparedDevice>>> cdiByPod = new ConcurrentHashMap<>();

    private volatile Server registrationServer;
    private volatile Server podResourcesServer;
    private volatile ManagedChannel pluginChannel;
    /** Whether the registered plugin offers GetPreferredAllocation (kubelet asks only then). */
    private volatile boolean pluginPrefers;
    private SharedIndexInformer<Pod> pods;
    /** Whether pods bound here wait: kubelet is down (restarting), or the test holds admission back. */
    private volatile boolean admissionHeld;
    /** Whether the next registration ends a restart: kubelet then admits the pods bound while it was down. */
    private volatile boolean resumeOnRegistration;

    public SimulatedKubelet(String nodeName, String resourceName, KubeletFolders folders, KubernetesClient client) {
        this(nodeName, resourceName, folders, client, false);
    }

    /**
     * @param resourceHealthStatus kubelet's {@code ResourceHealthStatus} feature gate (beta, on by default, from 1.36):
     *                             whether it opens the DRA drivers' health streams
     */
    public SimulatedKubelet(String nodeName, String resourceName, KubeletFolders folders, KubernetesClient client,
                            boolean resourceHealthStatus) {
        this.nodeName = nodeName;
        this.resourceName = resourceName;
        this.folders = folders;
        this.client = client;
        this.podWorker = Executors.newSingleThreadExecutor(r -> new Thread(r, "kubelet-" + nodeName));
        this.dra = new KubeletDra(nodeName, folders.pluginsRegistry(), transport, client, resourceHealthStatus);
        dra.onHealthChange(() -> {
            try {
                podWorker.execute(this::healthChanged);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // the kubelet is stopping: no more status writes
            }
        });
    }

    public String nodeName() {
        return nodeName;
    }

    public KubeletFolders folders() {
        return folders;
    }

    public SimulatedKubelet start() throws IOException {
        podResourcesServer = transport.serve(folders.podResourcesSocket(), new PodResourcesService());
        serveRegistration();
        dra.start();
        pods = client.pods().inAnyNamespace().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                consider(pod);
            }

            @Override
            public void onUpdate(Pod old, Pod pod) {
                consider(pod);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                podWorker.execute(() -> {
                    devicesByPod.remove(key(pod));
                    envByPod.remove(key(pod));
                    cdiByPod.remove(key(pod));
                    dra.release(key(pod));
                });
            }
        });
        return this;
    }

    /** kubelet restarts: the registration socket goes away, every socket in the folder is deleted, kubelet comes back. */
    public void restart() throws IOException, InterruptedException {
        restart(() -> { });
    }

    /**
     * kubelet restarts, and {@code whileDown} runs while it is down: no pod bound meanwhile is admitted until kubelet is
     * back and the device plugin has registered again; then they are, as a restarted kubelet admits the pods it finds
     * bound to its node. What it had allocated before stays allocated (kubelet's device manager checkpoint).
     */
    public void restart(Runnable whileDown) throws IOException, InterruptedException {
        holdAdmissions();
        stopRegistration();
        try (var files = Files.list(folders.devicePlugins())) {
            for (var file : files.toList()) {
                Files.deleteIfExists(file);
            }
        }
        whileDown.run();
        resumeOnRegistration = true;
        serveRegistration();
    }

    /** Pods bound to this node from now on wait to be admitted, as on a kubelet too busy to get to them. */
    public void holdAdmissions() {
        admissionHeld = true;
    }

    /** Admits the pods that waited, in kubelet's order ({@link #ADMISSION_ORDER}); and from now on every pod as it is bound. */
    public void resumeAdmissions() {
        admissionHeld = false;
        pods.getStore().list().stream()
                .filter(pod -> nodeName.equals(pod.getSpec().getNodeName()))
                .sorted(ADMISSION_ORDER)
                .forEach(this::consider);
    }

    /**
     * The pod's job exits 0, as {@code end} says: kubelet releases its devices (PodResources no longer lists the pod, so
     * the device plugin counts them free again) and writes the pod's end (phase Succeeded, its containers terminated, the
     * job's termination message). Done in the pod worker's order, after the pod's admission; returns once written.
     *
     * @throws IllegalStateException when this kubelet has not admitted the pod, or the write fails
     */
    public void end(String namespace, String name, PodEnd end) {
        var key = namespace + "/" + name;
        var written = java.util.concurrent.CompletableFuture.runAsync(() -> {
            if (!devicesByPod.containsKey(key)) {
                throw new IllegalStateException("pod " + key + " is not running on " + nodeName + ": this kubelet never admitted it");
            }
            client.pods().inNamespace(namespace).withName(name).editStatus(end::applyTo);
            devicesByPod.remove(key);
            envByPod.remove(key);
            cdiByPod.remove(key);
            dra.release(key);
        }, podWorker);
        try {
            written.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof IllegalStateException refused ? refused
                    : new IllegalStateException("ending pod " + key + " on " + nodeName + " failed: " + e.getCause(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("ending pod " + key + " on " + nodeName + ": not written within 10 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while ending pod " + key, e);
        }
    }

    /** The environment the plugin gave each container of the pod ({@code namespace/name}), by container name. */
    public Map<String, Map<String, String>> containerEnv(String podKey) {
        return envByPod.getOrDefault(podKey, Map.of());
    }

    /** The CDI device IDs the DRA drivers answered for the pod ({@code namespace/name}), by the pod's claim name. */
    public Map<String, List<String>> preparedClaims(String podKey) {
        var cdi = new LinkedHashMap<String, List<String>>();
        cdiByPod.getOrDefault(podKey, Map.of()).forEach((claim, devices) ->
                cdi.put(claim, devices.stream().flatMap(device -> device.cdiIds().stream()).toList()));
        return cdi;
    }

    /** The DRA drivers registered through the plugin watcher. */
    public Set<String> draDrivers() {
        return dra.drivers();
    }

    /** Registration sockets in the plugin registry that did not answer, tried again each second as kubelet does. */
    public Set<java.nio.file.Path> draRegistrationsRetried() {
        return dra.retrying();
    }

    /**
     * What {@code driver}'s health stream last said of its devices ("pool/device" → Healthy, Unhealthy or Unknown, as
     * the pod status's {@code allocatedResourcesStatus} spells it); empty without an open stream.
     */
    public Map<String, String> draDeviceHealth(String driver) {
        return dra.deviceHealth(driver);
    }

    /** Every registration received so far. */
    public List<RegisterRequest> registrations() {
        return List.copyOf(registrations);
    }

    /** Device IDs by container of every pod holding devices: what PodResources reports. */
    public Map<String, Map<String, List<String>>> allocations() {
        return Map.copyOf(devicesByPod);
    }

    /** The devices the plugin reported and their health, as of the last ListAndWatch message. */
    public Map<String, String> deviceHealth() {
        return Map.copyOf(deviceHealth);
    }

    private void serveRegistration() throws IOException {
        registrationServer = transport.serve(folders.devicePlugins().resolve(KubeletDevices.KUBELET_SOCKET), new RegistrationGrpc.RegistrationImplBase() {
            @Override
            public void register(RegisterRequest request, StreamObserver<Empty> response) {
                if (!KubeletDevices.VERSION.equals(request.getVersion()) || !resourceName.equals(request.getResourceName())) {
                    response.onError(io.grpc.Status.INVALID_ARGUMENT.withDescription("unsupported version " + request.getVersion()
                            + " or resource " + request.getResourceName()).asRuntimeException());
                    return;
                }
                registrations.add(request);
                pluginPrefers = request.getOptions().getGetPreferredAllocationAvailable();
                connect(request.getEndpoint());
                response.onNext(Empty.getDefaultInstance());
                response.onCompleted();
                if (resumeOnRegistration) {
                    resumeOnRegistration = false;
                    resumeAdmissions();
                }
            }
        });
    }

    private void connect(String endpoint) {
        var previous = pluginChannel;
        pluginChannel = transport.connect(folders.devicePlugins().resolve(endpoint));
        if (previous != null) {
            previous.shutdownNow();
        }
        var channel = pluginChannel;
        // Outside the Register call's context, which is cancelled as soon as Register returns.
        Context.ROOT.run(() -> DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(ListAndWatchResponse list) {
                updateDevices(list);
            }

            @Override
            public void onError(Throwable t) {
                log.log(System.Logger.Level.DEBUG, "ListAndWatch of {0} ended: {1}", nodeName, t.toString());
            }

            @Override
            public void onCompleted() {
            }
        }));
    }

    /** kubelet's device manager: capacity counts every device, allocatable only healthy ones. */
    private void updateDevices(ListAndWatchResponse list) {
        deviceHealth.clear();
        list.getDevicesList().forEach(device -> deviceHealth.put(device.getID(), device.getHealth()));
        long healthy = list.getDevicesList().stream().filter(d -> KubeletDevices.HEALTHY.equals(d.getHealth())).count();
        // A merge patch, not read-modify-write: the device plugin patches the same Node's labels concurrently.
        var patch = "{\"status\":{\"capacity\":{\"%s\":\"%d\"},\"allocatable\":{\"%s\":\"%d\"}}}"
                .formatted(resourceName, list.getDevicesCount(), resourceName, healthy);
        try {
            client.nodes().withName(nodeName).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        } catch (RuntimeException e) {
            // Never out of the stream observer: that would end ListAndWatch. The next message retries.
            log.log(System.Logger.Level.WARNING, "Could not update {0}''s {1}: {2}", nodeName, resourceName, e.toString());
        }
    }

    private void consider(Pod pod) {
        if (!nodeName.equals(pod.getSpec().getNodeName()) || pod.getStatus() != null && !"Pending".equals(pod.getStatus().getPhase())
                && pod.getStatus().getPhase() != null || admissionHeld) {
            return;
        }
        podWorker.execute(() -> admit(pod));
    }

    /** One pod: devices for each container that asks for them, then Running; or Failed, as kubelet's admission fails. */
    private void admit(Pod pod) {
        var key = key(pod);
        if (devicesByPod.containsKey(key) || isAdmitted(pod)) {
            return;
        }
        var byContainer = new LinkedHashMap<String, List<String>>();
        var envs = new LinkedHashMap<String, Map<String, String>>();
        Map<String, List<KubeletDra.PreparedDevice>> cdi;
        try {
            for (var container : pod.getSpec().getContainers()) {
                int wanted = ApiObjects.request(new PodBuilder().withNewSpec().withContainers(container).endSpec().build())
                        .get(resourceName).intValue();
                if (wanted > 0 && !servedByClaim(pod, container.getName())) {
                    var allocation = allocate(wanted, devicesOf(byContainer));
                    byContainer.put(container.getName(), allocation.devices());
                    envs.put(container.getName(), allocation.envs());
                }
            }
            cdi = dra.prepare(pod);
        } catch (AdmissionException | KubeletDra.PrepareException | StatusRuntimeException e) {
            log.log(System.Logger.Level.WARNING, "Pod {0} rejected on {1}: {2}", key, nodeName, e.getMessage());
            client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                    .editStatus(p -> new PodBuilder(p).editOrNewStatus().withPhase("Failed").withReason("UnexpectedAdmissionError")
                            .withMessage("Allocate failed due to " + e.getMessage()).endStatus().build());
            return;
        }
        devicesByPod.put(key, byContainer);
        envByPod.put(key, envs);
        cdiByPod.put(key, cdi);
        var annotation = byContainer.values().stream().flatMap(List::stream).reduce((a, b) -> a + "," + b).orElse("");
        var pods = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName());
        pods.patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + DEVICES_ANNOTATION + "\":\"" + annotation + "\"}}}");
        var now = Instant.now().toString();
        pods.editStatus(p -> new PodBuilder(p).editOrNewStatus().withPhase("Running").withStartTime(now)
                .addNewCondition().withType("Ready").withStatus("True").withLastTransitionTime(now).endCondition()
                .withContainerStatuses(dra.resourceHealthStatus() ? dra.allocatedResourcesStatus(pod, cdi) : List.of())
                .endStatus().build());
    }

    /**
     * A DRA device's health changed as this kubelet knows it: each running pod holding DRA devices gets its containers'
     * {@code allocatedResourcesStatus} written again where it changed, as kubelet syncs the pods a health update names.
     */
    private void healthChanged() {
        for (var entry : cdiByPod.entrySet()) {
            var slash = entry.getKey().indexOf('/');
            var pods = client.pods().inNamespace(entry.getKey().substring(0, slash)).withName(entry.getKey().substring(slash + 1));
            var pod = pods.get();
            if (pod == null || entry.getValue().isEmpty()) {
                continue;
            }
            var statuses = dra.allocatedResourcesStatus(pod, entry.getValue());
            if (!statuses.equals(pod.getStatus() == null ? null : pod.getStatus().getContainerStatuses())) {
                pods.editStatus(p -> new PodBuilder(p).editOrNewStatus().withContainerStatuses(statuses).endStatus().build());
            }
        }
    }

    /**
     * Whether the container's GPUs come from the claim kube-scheduler made for its extended resources
     * ({@code status.extendedResourceClaimStatus}): kubelet then asks no device plugin for them, the DRA driver prepares
     * them (which this kubelet does not model).
     */
    private boolean servedByClaim(Pod pod, String container) {
        var status = pod.getStatus() == null ? null : pod.getStatus().getExtendedResourceClaimStatus();
        return status != null && status.getRequestMappings() != null && status.getRequestMappings().stream()
                .anyMatch(m -> container.equals(m.getContainerName()) && resourceName.equals(m.getResourceName()));
    }

    /** What kubelet allocated one container: the device IDs it chose, and the environment the plugin's answer sets. */
    private record Allocation(List<String> devices, Map<String, String> envs) {
    }

    private Allocation allocate(int size, Set<String> alsoHeld) throws AdmissionException {
        var channel = pluginChannel;
        if (channel == null) {
            throw new AdmissionException("no device plugin registered for " + resourceName);
        }
        var held = new TreeSet<>(alsoHeld);
        devicesByPod.values().forEach(containers -> held.addAll(devicesOf(containers)));
        var available = new TreeSet<String>();
        deviceHealth.forEach((id, health) -> {
            if (KubeletDevices.HEALTHY.equals(health) && !held.contains(id)) {
                available.add(id);
            }
        });
        if (available.size() < size) {
            throw new AdmissionException("requested " + size + " " + resourceName + ", " + available.size() + " available");
        }
        var plugin = DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
        var preferred = !pluginPrefers ? List.<String>of() : plugin.getPreferredAllocation(PreferredAllocationRequest.newBuilder()
                .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
                        .addAllAvailableDeviceIDs(available).setAllocationSize(size))
                .build()).getContainerResponses(0).getDeviceIDsList();
        var chosen = preferred.size() == size ? List.copyOf(preferred) : List.copyOf(available).subList(0, size);
        var answer = plugin.allocate(AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(chosen)).build());
        return new Allocation(chosen, Map.copyOf(answer.getContainerResponses(0).getEnvsMap()));
    }

    /** The device IDs a pod's containers hold. */
    private static Set<String> devicesOf(Map<String, List<String>> byContainer) {
        var ids = new TreeSet<String>();
        byContainer.values().forEach(ids::addAll);
        return ids;
    }

    private static boolean isAdmitted(Pod pod) {
        return pod.getMetadata().getAnnotations() != null && pod.getMetadata().getAnnotations().containsKey(DEVICES_ANNOTATION);
    }

    /**
     * The order kubelet admits pods it learns of at once (after a restart, or a batch of watch events): by creation
     * time, as its HandlePodAdditions sorts them; pods created in the same second in the order the API server lists
     * them, by name.
     */
    private static final java.util.Comparator<Pod> ADMISSION_ORDER = java.util.Comparator
            .comparing((Pod pod) -> String.valueOf(pod.getMetadata().getCreationTimestamp()))
            .thenComparing(pod -> pod.getMetadata().getName());

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private final class PodResourcesService extends PodResourcesListerGrpc.PodResourcesListerImplBase {
        @Override
        public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
            var answer = ListPodResourcesResponse.newBuilder();
            devicesByPod.forEach((key, containers) -> {
                var slash = key.indexOf('/');
                var pod = PodResources.newBuilder().setNamespace(key.substring(0, slash)).setName(key.substring(slash + 1));
                containers.forEach((container, ids) -> pod.addContainers(ContainerResources.newBuilder().setName(container)
                        .addDevices(ContainerDevices.newBuilder().setResourceName(resourceName).addAllDeviceIds(ids))));
                answer.addPodResources(pod);
            });
            response.onNext(answer.build());
            response.onCompleted();
        }
    }

    private void stopRegistration() throws InterruptedException {
        var server = registrationServer;
        if (server != null) {
            server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        var channel = pluginChannel;
        pluginChannel = null;
        if (channel != null) {
            channel.shutdownNow();
        }
    }

    /** The node vanishes: no kubelet answers any more (sockets gone, pods no longer admitted). */
    @Override
    public void close() throws InterruptedException {
        if (pods != null) {
            pods.close();
        }
        podWorker.shutdownNow();
        dra.close();
        stopRegistration();
        var server = podResourcesServer;
        if (server != null) {
            server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        transport.close();
    }

    /** kubelet refuses a pod at admission. */
    private static final class AdmissionException extends Exception {
        AdmissionException(String message) {
            super(message);
        }
    }
}
