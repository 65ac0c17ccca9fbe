package io.hetgpu.deviceplugin.devices;

import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.HealthChange;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The node's GPUs as the plugin currently advertises them: the discovered topology with live health.
 * Everything that must react to a health change (kubelet's ListAndWatch streams, the node inventory)
 * watches this one place, so they never disagree. No gRPC and no I/O here.
 */
public final class GpuInventory {

    /** A registered watcher; closing it stops delivery. Closing twice is harmless. */
    public interface Watch extends AutoCloseable {
        @Override
        void close();
    }

    private final List<Consumer<NodeTopology>> watchers = new CopyOnWriteArrayList<>();
    private NodeTopology topology; // guarded by this

    public GpuInventory(NodeTopology initial) {
        this.topology = Objects.requireNonNull(initial, "initial");
    }

    public synchronized NodeTopology topology() {
        return topology;
    }

    /**
     * Applies a health change and tells every watcher, in order, when it changed anything.
     *
     * @return false when the device is not on this node or already had that health
     */
    public synchronized boolean apply(HealthChange change) {
        var position = topology.positionOf(change.uuid());
        if (position.isEmpty() || topology.device(position.get()).health() == change.health()) {
            return false;
        }
        topology = topology.withHealth(Map.of(change.uuid(), change.health()));
        // Delivered under the lock so that two quick flips reach every watcher in the order they happened;
        // watchers must not block (a gRPC stream's onNext only queues).
        for (var watcher : watchers) {
            watcher.accept(topology);
        }
        return true;
    }

    /** Delivers the current topology at once, then every change, until the returned watch is closed. */
    public synchronized Watch watch(Consumer<NodeTopology> watcher) {
        watcher.accept(topology);
        watchers.add(watcher);
        return () -> watchers.remove(watcher);
    }

    /** Which of these device IDs kubelet may not have: not on this node, or unhealthy. */
    public synchronized DeviceCheck check(Collection<String> deviceIds) {
        var unknown = new ArrayList<String>();
        var unhealthy = new ArrayList<String>();
        var seen = new HashSet<String>();
        var repeated = new LinkedHashSet<String>();
        for (var id : deviceIds) {
            if (!seen.add(id)) {
                repeated.add(id);
                continue;
            }
            var position = topology.positionOf(id);
            if (position.isEmpty()) {
                unknown.add(id);
            } else if (!topology.device(position.get()).isHealthy()) {
                unhealthy.add(id);
            }
        }
        return new DeviceCheck(unknown, unhealthy, List.copyOf(repeated));
    }
}
