package io.hetgpu.gpu.profile;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.discovery.HealthChange;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * GPUs from a machine profile instead of NVML: for nodes without GPUs (tests, the demo, the one-machine
 * cluster), chosen explicitly by naming the profile. Health changes only when {@link #setHealth} says so,
 * and reaches watchers the way NVML events do: on the source's own thread, in order.
 */
public final class SimulatedGpuSource implements GpuSource {

    private static final System.Logger LOG = System.getLogger(SimulatedGpuSource.class.getName());

    private final String profileName;
    private final List<Consumer<HealthChange>> watchers = new CopyOnWriteArrayList<>();
    /** One thread delivers every change, so each watcher sees them in the order they were made. */
    private final ExecutorService delivery;
    private NodeTopology topology;
    private boolean closed;

    private SimulatedGpuSource(MachineProfile profile, String nodeName) {
        this.profileName = profile.name();
        this.topology = profile.topology(nodeName);
        this.delivery = Executors.newSingleThreadExecutor(task -> {
            var thread = new Thread(task, "simulated-gpu-health-" + nodeName);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Opens a shipped profile by name ({@link #shippedProfiles()}) or a profile file by path, as the GPUs of
     * {@code nodeName}; device UUIDs are derived from the profile and node names.
     */
    public static SimulatedGpuSource open(String profileNameOrPath, String nodeName) throws GpuDiscoveryException {
        try {
            return of(ProfileLoader.load(profileNameOrPath), nodeName);
        } catch (ProfileFormatException e) {
            throw new GpuDiscoveryException(e.getMessage());
        }
    }

    /** A node of an already loaded profile: for simulators that build many nodes from one profile. */
    public static SimulatedGpuSource of(MachineProfile profile, String nodeName) {
        return new SimulatedGpuSource(profile, nodeName);
    }

    public static List<String> shippedProfiles() {
        return ProfileLoader.SHIPPED;
    }

    @Override
    public String description() {
        return "simulated:" + profileName;
    }

    @Override
    public synchronized NodeTopology topology() {
        return topology;
    }

    /**
     * Makes a device healthy or unhealthy and tells every watcher; setting the health a device already has
     * changes nothing and tells no one.
     *
     * @throws IllegalArgumentException when no device of this node has {@code uuid}
     */
    public synchronized void setHealth(String uuid, DeviceHealth health, String reason) {
        int position = topology.positionOf(uuid).orElseThrow(() ->
                new IllegalArgumentException("no simulated device " + uuid + " on this node (" + description() + ")"));
        if (closed) {
            throw new IllegalStateException(description() + " is closed");
        }
        if (topology.device(position).health() == health) {
            return;
        }
        topology = topology.withHealth(Map.of(uuid, health));
        var change = new HealthChange(uuid, health, reason);
        // Submitted under the lock, so deliveries keep the order of the changes.
        delivery.execute(() -> deliver(change));
    }

    @Override
    public AutoCloseable watchHealth(Consumer<HealthChange> listener) {
        watchers.add(listener);
        return () -> watchers.remove(listener);
    }

    private void deliver(HealthChange change) {
        for (var watcher : watchers) {
            try {
                watcher.accept(change);
            } catch (RuntimeException e) {
                // One faulty watcher must not keep the change from the others.
                LOG.log(System.Logger.Level.WARNING, "health watcher failed on " + change + ": " + e);
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        watchers.clear();
        delivery.shutdown();
    }
}
