package io.hetgpu.deviceplugin.dra;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.ResourceStack;
import io.hetgpu.deviceplugin.dra.slices.PcieRoots;
import io.hetgpu.deviceplugin.dra.slices.SlicePublisher;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.deviceplugin.status.StatusServer;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node agent in DRA mode: the GPU source's devices published as ResourceSlices of hetgpu's driver, and kubelet's
 * DRA plugin API served (claims prepared into CDI specs), with the same health watch, status server and metrics as the
 * device plugin ({@link io.hetgpu.deviceplugin.DevicePlugin}), which it replaces on the node: one kubelet API per node,
 * never both for the same GPUs.
 */
public final class DraPlugin implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DraPlugin.class);

    /** Claims kubelet may name in one call; a pod holds a few, and kubelet calls per pod. */
    public static final int MAX_CLAIMS_PER_CALL = 128;
    /** Prepared claims kept on a node: far more than pods with GPUs fit on one, and a bound on the checkpoint. */
    public static final int MAX_PREPARED_CLAIMS = 1024;
    /**
     * kubelet's health streams: one per registration, a few more for a kubelet restarting; sent again every 10 s, and
     * trusted by kubelet for 30 s (its own default), so one lost resend does not turn a device Unknown.
     */
    public static final HealthStreams.Settings HEALTH_STREAMS = new HealthStreams.Settings(4, Duration.ofSeconds(10), Duration.ofSeconds(30));
    /** Where the GPUs' PCIe roots are read from. */
    private static final Path SYSFS = Path.of("/sys");

    /**
     * @param registryDir kubelet's plugin registry folder (its plugin watcher finds {@code <driver>-reg.sock} there)
     * @param pluginDir   kubelet's plugins folder; the driver's socket and checkpoint are in {@code <pluginDir>/<driver>}
     * @param cdiDir      where CDI specs are written for the container runtime
     * @param driver      the DRA driver's name
     * @param nodeName    this node, which is also the pool's name
     * @param httpPort    /healthz and /metrics port; 0 for none
     * @param catalog     card tiers for the slices' {@code tier} attribute
     */
    public record Settings(Path registryDir, Path pluginDir, Path cdiDir, String driver, String nodeName, int httpPort,
                           CardCatalog catalog) {

        /** The driver's own folder: its DRA socket, its checkpoint. */
        public Path driverFolder() {
            return pluginDir.resolve(driver);
        }
    }

    private final ResourceStack resources;
    private final DraEndpoint endpoint;
    private final ClaimPreparer preparer;

    private DraPlugin(ResourceStack resources, DraEndpoint endpoint, ClaimPreparer preparer) {
        this.resources = resources;
        this.endpoint = endpoint;
        this.preparer = preparer;
    }

    /** Starts serving {@code source} (which the plugin then owns and closes); claims are read through {@code client}. */
    public static DraPlugin start(Settings settings, GpuSource source, KubernetesClient client) throws IOException {
        ClaimPreparer.ClaimReader reader = (namespace, name) ->
                client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get();
        var resources = new ResourceStack();
        resources.push(source);
        try {
            var inventory = new GpuInventory(source.topology());
            // The host's sysfs, as a container sees it read-only: where a GPU's bus is not found, it has no pcieRoot.
            var slices = new SlicePublisher(client, settings.driver(), settings.nodeName(), inventory, settings.catalog(),
                    PcieRoots.of(inventory.topology(), SYSFS));
            resources.push(slices);
            // Before the health watch: the streams start from the topology the watch then changes.
            var health = resources.push(new HealthStreams(HetgpuDra.pool(settings.nodeName()), inventory.topology(),
                    HEALTH_STREAMS, Clock.systemUTC()));
            // One change, two readers: the slice's taint for the scheduler, the health streams for kubelet's pod status.
            resources.watchHealth(source, inventory, change -> {
                slices.inventoryChanged();
                health.changed(change);
            });
            var registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            new PluginMetrics(registry, inventory); // the GPU gauges every mode has
            var metrics = new DraMetrics(registry);
            metrics.healthStreams(health::openStreams);
            var transport = new UnixSocketTransport();
            resources.push(transport);

            Files.createDirectories(settings.driverFolder());
            Files.createDirectories(settings.cdiDir());
            var checkpoint = Checkpoint.open(settings.driverFolder(), MAX_PREPARED_CLAIMS);
            var preparer = new ClaimPreparer(new ClaimPreparer.Settings(settings.driver(), HetgpuDra.pool(settings.nodeName()),
                    settings.cdiDir(), MAX_CLAIMS_PER_CALL), inventory, reader, checkpoint, metrics);
            // Slices first: a claim can only be allocated here once they are published, and kubelet only calls once registered.
            slices.start();
            var endpoint = DraEndpoint.start(transport, settings.registryDir(), settings.driverFolder(), settings.driver(), preparer,
                    health, metrics);
            resources.push(endpoint);
            if (settings.httpPort() > 0) {
                resources.push(new StatusServer(settings.httpPort(), registry, () -> endpoint.registered() && slices.published()));
            }
            log.info("{} GPUs from {} as DRA driver {}; {} claims prepared before this start", inventory.topology().size(),
                    source.description(), settings.driver(), checkpoint.size());
            return new DraPlugin(resources, endpoint, preparer);
        } catch (IOException | RuntimeException e) {
            resources.close();
            throw e;
        }
    }

    public DraEndpoint endpoint() {
        return endpoint;
    }

    /** Why kubelet has not registered the driver; empty when it has. */
    public Optional<String> notRegistered() {
        return endpoint.notRegistered();
    }

    /** Claims prepared now (for tests and logs). */
    public int preparedClaims() {
        return preparer.prepared();
    }

    /** Closes in reverse order of opening: the sockets go first. CDI specs and the checkpoint stay for running pods. */
    @Override
    public void close() {
        resources.close();
    }
}
