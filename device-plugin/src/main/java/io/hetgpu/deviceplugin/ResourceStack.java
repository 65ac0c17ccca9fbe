package io.hetgpu.deviceplugin;

import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.discovery.HealthChange;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a running node agent has opened (sockets, watches, the GPU source), closed in reverse order of opening: the
 * kubelet-facing sockets, opened last, go first, so kubelet stops calling before what serves its calls goes. A part
 * that fails to close is logged and the rest still closed.
 */
public final class ResourceStack implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ResourceStack.class);

    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    /** Holds {@code resource} until {@link #close}, and returns it. */
    public synchronized <T extends AutoCloseable> T push(T resource) {
        opened.push(resource);
        return resource;
    }

    /**
     * Follows {@code source}'s health into {@code inventory} until {@link #close}: each change that changes the inventory
     * is logged and then handed to {@code changed} (the DRA driver republishes its slice and tells kubelet's health
     * streams; the device plugin's ListAndWatch streams follow the inventory itself). Both modes start it here.
     */
    public void watchHealth(GpuSource source, GpuInventory inventory, Consumer<HealthChange> changed) {
        push(source.watchHealth(change -> {
            if (inventory.apply(change)) {
                log.warn("GPU {} is now {}: {}", change.uuid(), change.health().label(), change.reason());
                changed.accept(change);
            }
        }));
    }

    @Override
    public void close() {
        while (true) {
            AutoCloseable resource;
            synchronized (this) {
                if (opened.isEmpty()) {
                    return;
                }
                resource = opened.pop();
            }
            try {
                resource.close();
            } catch (Exception e) {
                log.warn("Error while stopping {}: {}", resource.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
