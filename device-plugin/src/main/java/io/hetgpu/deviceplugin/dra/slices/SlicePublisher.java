package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.gpu.tier.CardCatalog;

/**
 * PLACEHOLDER with the agreed API, so that the kubelet side builds: the ResourceSlice publisher is another part of the
 * work and replaces this file whole.
 */
public final class SlicePublisher implements AutoCloseable {

    public SlicePublisher(KubernetesClient client, String driverName, String nodeName, GpuInventory inventory,
                          CardCatalog catalog, java.util.Map<Integer, String> pcieRoots) { }

    /** Publishes in the background, retried until it holds. */
    public void start() { }

    /** Called after {@code GpuInventory.apply(change)} returned true. */
    public void inventoryChanged() { }

    /** Whether the first publish held (for /healthz readiness). */
    public boolean published() {
        return true;
    }

    @Override
    public void close() { }
}
