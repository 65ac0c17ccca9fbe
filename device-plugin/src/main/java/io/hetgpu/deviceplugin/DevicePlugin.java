package io.hetgpu.deviceplugin;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.kubelet.DevicePluginEndpoint;
import io.hetgpu.deviceplugin.kubelet.DevicePluginService;
import io.hetgpu.deviceplugin.kubelet.FailureCause;
import io.hetgpu.deviceplugin.kubelet.PodResourcesReader;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.deviceplugin.node.NodeInventory;
import io.hetgpu.deviceplugin.node.NodeInventoryPublisher;
import io.hetgpu.deviceplugin.node.NodeInventorySync;
import io.hetgpu.deviceplugin.pods.BoundPodWatch;
import io.hetgpu.deviceplugin.pods.DeviceHandshake;
import io.hetgpu.deviceplugin.pods.MismatchEvents;
import io.hetgpu.deviceplugin.pods.PendingAssignments;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.deviceplugin.status.StatusServer;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running device plugin: the GPU source's devices served to kubelet, health streamed, and — given
 * an API client — the node inventory published. The command line ({@link DevicePluginMain}) and the
 * test cluster both start it through {@link #start}, so the test cluster runs the very same wiring.
 */
public final class DevicePlugin implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DevicePlugin.class);

    /**
     * @param devicePluginDir      kubelet's device-plugin folder
     * @param podResourcesSocket   kubelet's PodResources v1 socket
     * @param resourceName         the extended resource advertised
     * @param strategies           how containers learn their GPUs
     * @param podResourcesInterval how often the free devices are read
     * @param httpPort             /healthz and /metrics port; 0 for none
     * @param nodeName             the Node the inventory is published on
     * @param catalog              card tiers for the {@code gpu.tier} label: the built-in table with the admin's overrides
     */
    public record Settings(Path devicePluginDir, Path podResourcesSocket, String resourceName, Set<DeviceListStrategy> strategies,
                           Duration podResourcesInterval, int httpPort, String nodeName, CardCatalog catalog) {
        public Settings {
            strategies = Set.copyOf(strategies);
        }
    }

    private final ResourceStack resources;
    private final DevicePluginEndpoint endpoint;

    private DevicePlugin(ResourceStack resources, DevicePluginEndpoint endpoint) {
        this.resources = resources;
        this.endpoint = endpoint;
    }

    /**
     * Starts serving {@code source} (which the plugin then owns and closes). With a client the node
     * inventory is published on {@code settings.nodeName()}; without one the plugin needs no API server.
     */
    public static DevicePlugin start(Settings settings, GpuSource source, Optional<KubernetesClient> client) throws IOException {
        var resources = new ResourceStack();
        resources.push(source);
        try {
            var inventory = new GpuInventory(source.topology());
            resources.watchHealth(source, inventory, change -> { }); // kubelet's ListAndWatch streams follow the inventory
            var registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            var metrics = new PluginMetrics(registry, inventory);
            var transport = new UnixSocketTransport();
            resources.push(transport);

            Optional<NodeInventorySync> sync = Optional.empty();
            var pending = PendingAssignments.none();
            Consumer<DeviceHandshake.Allocation.Mismatch> onMismatch = mismatch -> { };
            if (client.isPresent()) {
                var podResources = new PodResourcesReader(transport, settings.podResourcesSocket());
                resources.push(podResources);
                pending = new PendingAssignments(settings.nodeName(),
                        inventory.topology().devices().stream().map(device -> device.uuid()).toList());
                followAssignments(client.get(), settings, pending, podResources, resources);
                var events = new MismatchEvents(client.get(), settings.nodeName(), Clock.systemUTC());
                resources.push(events);
                onMismatch = events;
                var created = new NodeInventorySync(inventory, new NodeInventory(settings.catalog(), Duration.ofMinutes(1)),
                        new NodeInventoryPublisher(client.get(), settings.nodeName()),
                        () -> podResources.heldDevices(settings.resourceName()), Clock.systemUTC(),
                        settings.podResourcesInterval(), metrics);
                resources.push(created);
                sync = Optional.of(created);
            }
            var publisher = sync;
            var service = new DevicePluginService(inventory, EnumSet.copyOf(settings.strategies()), metrics,
                    ids -> publisher.ifPresent(NodeInventorySync::allocated), pending, onMismatch, settings.catalog());
            var endpoint = new DevicePluginEndpoint(transport, settings.devicePluginDir(), settings.resourceName(), service, metrics);
            resources.push(endpoint);
            endpoint.start();
            if (settings.httpPort() > 0) {
                resources.push(new StatusServer(settings.httpPort(), registry,
                        () -> endpoint.state() == DevicePluginEndpoint.State.REGISTERED));
            }
            sync.ifPresent(NodeInventorySync::start);
            log.info("{} GPUs from {}; {}", inventory.topology().size(), source.description(),
                    endpoint.state() == DevicePluginEndpoint.State.REGISTERED ? "registered with kubelet" : "serving, kubelet not reached yet");
            return new DevicePlugin(resources, endpoint);
        } catch (IOException | RuntimeException e) {
            resources.close();
            throw e;
        }
    }

    /**
     * Watches the node's pods for {@code hetgpu.io/gpu-devices}, and once they are listed, forgets the pods a previous
     * run of the plugin allocated: kubelet's PodResources API names every pod holding devices, including the ones
     * admitted whose containers have not started yet (status alone would miss those, for as long as an image pull
     * takes). The list is awaited in the background, so that registering with kubelet does not wait for the first API
     * call; kubelet's GetPreferredAllocation waits for it instead ({@link PendingAssignments#listed}).
     */
    private static void followAssignments(KubernetesClient client, Settings settings, PendingAssignments pending,
                                          PodResourcesReader podResources, ResourceStack resources) {
        // Started in the background too: in the image's interpreted JVM, building the informer alone takes a second.
        var watching = new BackgroundWatch();
        resources.push(watching);
        Thread.ofPlatform().daemon().name("pod-list").start(() -> {
            try {
                var watch = BoundPodWatch.start(client, settings.nodeName(), settings.resourceName(), settings.catalog(), pending);
                if (!watching.keep(watch)) {
                    watch.close();
                    return;
                }
                if (!watch.awaitSynced(PendingAssignments.LIST_PATIENCE)) {
                    log.warn("The pods bound to {} were not listed within {} s: until they are, GPUs are chosen as for pods"
                            + " without an assignment", settings.nodeName(), PendingAssignments.LIST_PATIENCE.toSeconds());
                }
                pending.heldByKubelet(podResources.podsHolding(settings.resourceName()));
            } catch (RuntimeException e) {
                log.warn("kubelet's PodResources API did not answer ({}): pods admitted before this start are told by"
                        + " their container statuses only", FailureCause.of(e));
            } finally {
                pending.listed();
            }
        });
    }

    /** The pod watch started in the background: a plugin closed before the watch has started closes it once it has. */
    private static final class BackgroundWatch implements AutoCloseable {

        private BoundPodWatch watch;
        private boolean closed;

        /** Holds the started watch; false when the plugin closed meanwhile, and the caller then closes the watch. */
        synchronized boolean keep(BoundPodWatch started) {
            watch = started;
            return !closed;
        }

        @Override
        public synchronized void close() {
            closed = true;
            if (watch != null) {
                watch.close();
            }
        }
    }

    public DevicePluginEndpoint.State state() {
        return endpoint.state();
    }

    /** Closes in reverse order of opening: the socket goes first, so kubelet stops allocating at once. */
    @Override
    public void close() {
        resources.close();
    }
}
