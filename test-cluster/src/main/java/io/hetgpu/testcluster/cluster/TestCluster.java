package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.deviceplugin.DevicePlugin;
import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.testcluster.kubelet.KubeletFolders;
import io.hetgpu.testcluster.kubelet.PlainDevicePlugin;
import io.hetgpu.testcluster.kubelet.PodEnd;
import io.hetgpu.testcluster.kubelet.SpeedTable;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A whole cluster on one machine: the in-process API server, a Node object per {@link NodeSpec}, and
 * on every GPU node a simulated kubelet with the real device plugin (started with the node's simulated
 * profile) registered to it over Unix sockets in {@code workDir} (or, on nodes hetgpu does not serve, a
 * plain device plugin and, where the node has them, GPU Feature Discovery's labels). The scheduler extender and the
 * scheduler driver attach to it.
 */
public final class TestCluster implements AutoCloseable {

    /** Label the simulated overlay of {@code manifests/} selects its per-profile DaemonSets by. */
    public static final String SIMULATED_PROFILE_LABEL = "hetgpu.io/simulated-profile";
    private static final String RESOURCE = HetgpuKeys.DEFAULT_RESOURCE_NAME;
    /**
     * How often each device plugin reads kubelet's PodResources to publish its free devices (besides shortly after each
     * Allocate): often enough that a demo or a test sees a freed GPU published in well under a second.
     */
    public static final Duration INVENTORY_INTERVAL = Duration.ofMillis(500);

    private final ApiServer api;
    private final KubernetesClient client;
    private final List<NodeSpec> nodes;
    private final Map<String, SimulatedKubelet> kubelets = new LinkedHashMap<>();
    private final Map<String, SimulatedGpuSource> gpuSources = new LinkedHashMap<>();
    private final Map<String, DevicePlugin> plugins = new LinkedHashMap<>();
    private final List<Extender> extenders = new CopyOnWriteArrayList<>();
    /** How each running extender is stopped: it, then its API client. */
    private final Map<Extender, AutoCloseable> extenderStops = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, PlainDevicePlugin> plainPlugins = new LinkedHashMap<>();
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private final Duration inventoryInterval;

    private TestCluster(ApiServer api, List<NodeSpec> nodes, Duration inventoryInterval) {
        this.api = api;
        this.nodes = List.copyOf(nodes);
        this.inventoryInterval = inventoryInterval;
        this.client = api.newClient();
        resources.push(api);
        resources.push(client);
    }

    /** Starts the API server and every node; returns once every GPU node advertises its GPUs and inventory. */
    public static TestCluster start(List<NodeSpec> nodes, Path workDir, Consumer<String> progress) throws IOException, GpuDiscoveryException {
        return start(nodes, workDir, progress, INVENTORY_INTERVAL);
    }

    /**
     * The same, each device plugin reading kubelet's free devices every {@code inventoryInterval}: a test that waits
     * for every freed GPU to be published before its next step (as the simulator's replay does) waits less with a
     * shorter one.
     */
    public static TestCluster start(List<NodeSpec> nodes, Path workDir, Consumer<String> progress, Duration inventoryInterval)
            throws IOException, GpuDiscoveryException {
        var cluster = new TestCluster(ApiServer.start(), nodes, inventoryInterval);
        try {
            progress.accept("API server at " + cluster.api.url());
            for (var node : nodes) {
                cluster.addNode(node, workDir);
            }
            progress.accept(nodes.size() + " nodes created; " + (cluster.plugins.size() + cluster.plainPlugins.size())
                    + " device plugins registering");
            cluster.awaitGpuNodesReady(Duration.ofSeconds(30));
            progress.accept("every GPU node advertises its GPUs and publishes its inventory");
            return cluster;
        } catch (IOException | GpuDiscoveryException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void addNode(NodeSpec spec, Path workDir) throws IOException, GpuDiscoveryException {
        var node = new NodeBuilder().withNewMetadata().withName(spec.name())
                .addToLabels("kubernetes.io/hostname", spec.name())
                .addToLabels(HetgpuKeys.LABEL_RACK, spec.rack())
                .addToLabels(HetgpuKeys.LABEL_ZONE, spec.zone())
                .endMetadata()
                .withNewStatus()
                .addToCapacity(resources(spec)).addToAllocatable(resources(spec))
                .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .endStatus();
        if (spec.servedByHetgpu()) {
            node.editMetadata().addToLabels(SIMULATED_PROFILE_LABEL, spec.profile().get()).endMetadata();
        }
        client.nodes().resource(node.build()).create();
        // Every node has a kubelet, so pods run wherever they are bound; only GPU nodes have a device plugin.
        var folders = KubeletFolders.under(workDir.resolve(spec.name()));
        var kubelet = new SimulatedKubelet(spec.name(), RESOURCE, folders, client).start();
        kubelets.put(spec.name(), kubelet);
        resources.push(kubelet);
        if (spec.profile().isEmpty()) {
            return;
        }
        if (spec.servedByDra()) {
            publishDraSlice(spec);
            return;
        }
        if (!spec.servedByHetgpu()) {
            try (var gpus = SimulatedGpuSource.open(spec.profile().get(), spec.name())) {
                startPlainPlugin(spec, gpus.topology(), folders);
            }
            return;
        }
        startPlugin(spec, folders);
    }

    /**
     * A DRA driver on the node, NVIDIA's or hetgpu's: its GPUs published as one ResourceSlice, and the driver's
     * DeviceClass made with the first such node.
     */
    private void publishDraSlice(NodeSpec spec) throws GpuDiscoveryException {
        boolean hetgpu = spec.plugin() == NodeSpec.GpuPlugin.HETGPU_DRA;
        try (var gpus = SimulatedGpuSource.open(spec.profile().get(), spec.name())) {
            client.resource(hetgpu ? HetgpuSlice.of(spec.name(), gpus.topology(), CardCatalog.defaults())
                    : NvidiaDraSlice.of(spec.name(), gpus.topology())).create();
        }
        var gpuClass = hetgpu ? HetgpuDraClass.gpuClass() : NvidiaDraSlice.gpuClass(null);
        var classes = client.resources(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class);
        if (classes.withName(gpuClass.getMetadata().getName()).get() == null) {
            classes.resource(gpuClass).create();
        }
    }

    /** hetgpu's device plugin on the node, as its DaemonSet pod starts it; it closes its GPU source when it stops. */
    private void startPlugin(NodeSpec spec, KubeletFolders folders) throws IOException, GpuDiscoveryException {
        var source = SimulatedGpuSource.open(spec.profile().get(), spec.name());
        gpuSources.put(spec.name(), source);
        var plugin = DevicePlugin.start(new DevicePlugin.Settings(folders.devicePlugins(), folders.podResourcesSocket(), RESOURCE,
                Set.of(DeviceListStrategy.ENVVAR), inventoryInterval, 0, spec.name(), CardCatalog.defaults()), source, Optional.of(client));
        plugins.put(spec.name(), plugin);
        resources.push(plugin);
    }

    /**
     * hetgpu's device plugin on the node restarts, as its DaemonSet pod does after a crash or an upgrade: the running one
     * stops, a new one starts with nothing but what it reads (the node's pods, kubelet's PodResources) and registers again.
     */
    public void restartPlugin(String node) throws IOException, GpuDiscoveryException {
        var running = require(plugins, node);
        running.close();
        resources.remove(running);
        var spec = nodes.stream().filter(n -> n.name().equals(node)).findFirst().orElseThrow();
        startPlugin(spec, kubelet(node).folders());
    }

    /**
     * NVIDIA's device plugin stands in as a plain one, and GPU Feature Discovery's labels are written as GFD
     * writes them from NVML, here from the simulated profile's first GPU.
     */
    private void startPlainPlugin(NodeSpec spec, NodeTopology topology, KubeletFolders folders) throws IOException {
        var uuids = topology.devices().stream().map(GpuDevice::uuid).toList();
        var plugin = new PlainDevicePlugin(uuids, RESOURCE, folders).start();
        plainPlugins.put(spec.name(), plugin);
        resources.push(plugin);
        if (spec.plugin() == NodeSpec.GpuPlugin.NVIDIA_WITH_FEATURE_DISCOVERY) {
            var labels = FeatureDiscoveryLabelling.of(topology);
            // A merge patch, as GFD's own writes: kubelet patches the same Node's status meanwhile.
            client.nodes().withName(spec.name()).patch(PatchContext.of(PatchType.JSON_MERGE),
                    Serialization.asJson(Map.of("metadata", Map.of("labels", labels))));
        }
    }

    private static Map<String, Quantity> resources(NodeSpec spec) {
        return Map.of("cpu", new Quantity(Integer.toString(spec.cpus())), "memory", new Quantity(spec.memoryGi() + "Gi"),
                "pods", new Quantity("110"));
    }

    private void awaitGpuNodesReady(Duration timeout) {
        for (var name : plugins.keySet()) {
            client.nodes().withName(name).waitUntilCondition(TestCluster::isAdvertising, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        for (var name : plainPlugins.keySet()) {
            client.nodes().withName(name).waitUntilCondition(TestCluster::offersGpus, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private static boolean offersGpus(Node node) {
        return node != null && node.getStatus() != null && node.getStatus().getAllocatable() != null
                && node.getStatus().getAllocatable().containsKey(RESOURCE);
    }

    private static boolean isAdvertising(Node node) {
        if (node == null || node.getStatus() == null) {
            return false;
        }
        var allocatable = node.getStatus().getAllocatable();
        var annotations = node.getMetadata().getAnnotations();
        return allocatable != null && allocatable.containsKey(RESOURCE) && annotations != null
                && annotations.containsKey(HetgpuKeys.ANNOTATION_INVENTORY) && annotations.containsKey(HetgpuKeys.ANNOTATION_FREE);
    }

    /**
     * Starts the real scheduler extender, configured as {@code manifests/} deploys it, its verbs on a free
     * loopback port (kube-scheduler calls it there, {@link DeployedConfiguration#schedulerCalling(Extender)}) and its
     * metrics on another, with its own API client; returns once its informers have synced.
     */
    public Extender startExtender(ExtenderConfig config) {
        return startExtender(config, 0);
    }

    /**
     * The same, its verbs on {@code port}: where kube-scheduler already calls an extender that was stopped
     * ({@link #stopExtender}), as the extender container restarted in the scheduler's pod comes back on the same port.
     */
    public Extender startExtender(ExtenderConfig config, int port) {
        var extenderClient = api.newClient();
        Extender extender;
        try {
            // As in the shipped pod: the verbs on loopback, metrics and probes on a port of their own (any free one here).
            extender = Extender.start(config, new ServerOptions("127.0.0.1", port, config.bodyLimitBytes(), null, null)
                    .withMetrics("127.0.0.1", 0), Optional.of(extenderClient));
        } catch (RuntimeException e) {
            extenderClient.close();
            throw e;
        }
        AutoCloseable stopping = () -> {
            extender.close();
            extenderClient.close();
        };
        extenderStops.put(extender, stopping);
        resources.push(stopping);
        extenders.add(extender);
        extender.synced().orTimeout(30, TimeUnit.SECONDS).join();
        return extender;
    }

    /**
     * The extender stops, as its container does when it crashes or is restarted: its port closes, and what it held only
     * in memory (binds in flight, job plans) is gone.
     */
    public void stopExtender(Extender extender) throws Exception {
        var stopping = extenderStops.remove(extender);
        if (stopping == null) {
            throw new IllegalArgumentException("not an extender of this cluster, or stopped already");
        }
        extenders.remove(extender);
        resources.remove(stopping);
        stopping.close();
    }

    /**
     * The node disappears: its kubelet and device plugin stop, and the Node is marked as kube-controller-manager's
     * node lifecycle controller marks an unreachable node (Ready Unknown, {@code node.kubernetes.io/unreachable}
     * NoSchedule taint), so no new pod is scheduled there.
     */
    public void vanish(String node) throws InterruptedException {
        kubelet(node).close();
        var plugin = plugins.get(node);
        if (plugin != null) {
            plugin.close();
        }
        var plain = plainPlugins.get(node);
        if (plain != null) {
            plain.close();
        }
        client.nodes().withName(node).edit(n -> new NodeBuilder(n).editSpec()
                .addNewTaint().withKey("node.kubernetes.io/unreachable").withEffect("NoSchedule").endTaint().endSpec().build());
        client.nodes().withName(node).editStatus(n -> new NodeBuilder(n).editStatus()
                .withConditions(new io.fabric8.kubernetes.api.model.NodeConditionBuilder().withType("Ready").withStatus("Unknown")
                        .withReason("NodeStatusUnknown").withMessage("Kubelet stopped posting node status.").build())
                .endStatus().build());
    }

    public ApiServer api() {
        return api;
    }

    public KubernetesClient client() {
        return client;
    }

    /** The extenders started on this cluster, to wait until their informers have seen what the API server holds. */
    public List<Extender> extenders() {
        return List.copyOf(extenders);
    }

    public List<NodeSpec> nodes() {
        return nodes;
    }

    public SimulatedKubelet kubelet(String node) {
        return require(kubelets, node);
    }

    /**
     * The pod's job runs to its end, as fast as {@code speeds} says its class runs on the cards its kubelet gave it: its
     * kubelet writes it Succeeded, its run as long as its declared work ({@code hetgpu.io/work}) takes there and ending
     * now, with the job's termination message ({@link PodEnd}). A pod on a node hetgpu's device plugin does not serve has
     * no card model to read here.
     *
     * @return the end written
     * @throws IllegalStateException when the pod is not running on a GPU node of this cluster, or the table cannot time it
     */
    public PodEnd endRun(String namespace, String name, SpeedTable speeds) {
        var pod = client.pods().inNamespace(namespace).withName(name).get();
        var node = pod == null || pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (node == null || !gpuSources.containsKey(node)) {
            throw new IllegalStateException("pod " + namespace + "/" + name + (pod == null ? " does not exist"
                    : node == null ? " is not bound" : " is on " + node + ", not a node of hetgpu's device plugin"));
        }
        var allocations = kubelet(node).allocations();
        if (!allocations.containsKey(namespace + "/" + name)) {
            throw new IllegalStateException("pod " + namespace + "/" + name + " on " + node + " is not running: its kubelet has not admitted it");
        }
        var topology = gpuSources.get(node).topology();
        var devices = allocations.get(namespace + "/" + name);
        var models = devices.values().stream().flatMap(List::stream)
                .map(uuid -> topology.positionOf(uuid).map(position -> topology.device(position).model()).orElse("")).toList();
        return switch (PodEnd.of(pod, models, speeds, java.time.Instant.now())) {
            case PodEnd.Outcome.Ends ends -> {
                kubelet(node).end(namespace, name, ends.end());
                yield ends.end();
            }
            case PodEnd.Outcome.CannotEnd cannot -> throw new IllegalStateException("pod " + namespace + "/" + name + " on " + node
                    + " cannot end by the speed table: " + cannot.reason());
        };
    }

    /** The simulated GPUs of a GPU node, to make one unhealthy or healthy again. */
    public SimulatedGpuSource gpus(String node) {
        return require(gpuSources, node);
    }

    private static <T> T require(Map<String, T> byNode, String node) {
        var value = byNode.get(node);
        if (value == null) {
            throw new IllegalArgumentException("no GPU node named " + node + " (GPU nodes: " + byNode.keySet() + ")");
        }
        return value;
    }

    @Override
    public void close() {
        while (!resources.isEmpty()) {
            try {
                resources.pop().close();
            } catch (Exception e) {
                System.getLogger(TestCluster.class.getName()).log(System.Logger.Level.WARNING, "stopping: " + e);
            }
        }
    }
}
