package io.hetgpu.deviceplugin.node;

import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.FreeDevices;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.tier.CardCatalog;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * What the plugin wants on its Node: the {@link NodeLabels}, the {@code gpu-inventory} annotation and the
 * {@code gpu-free} annotation. Pure: the caller brings the topology, the devices pods hold and the time.
 *
 * <p>The free set is rewritten when it changes, and otherwise only when the published one is older than
 * {@code freeRefresh}: rewriting {@code readAt} on every poll would patch the Node every few seconds for
 * nothing, while never rewriting it would leave readers unable to tell a live plugin from a dead one.
 */
public final class NodeInventory {

    private final CardCatalog catalog;
    private final Duration freeRefresh;
    private final InventoryCodec inventoryCodec = new InventoryCodec();
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();

    public NodeInventory(CardCatalog catalog, Duration freeRefresh) {
        this.catalog = catalog;
        this.freeRefresh = freeRefresh;
    }

    /**
     * @param held    device IDs of our resource that running pods hold; empty when kubelet could not be asked,
     *                and then the published free set is left as it is
     * @param current the Node's annotations now, to keep a still-valid free set
     */
    public NodeMetadata desired(NodeTopology topology, Optional<Set<String>> held, Instant now, NodeMetadata current) {
        var annotations = new HashMap<String, String>();
        annotations.put(HetgpuKeys.ANNOTATION_INVENTORY, inventoryCodec.encode(topology));
        held.ifPresent(ids -> annotations.put(HetgpuKeys.ANNOTATION_FREE,
                freeAnnotation(topology, ids, now, current.annotations().get(HetgpuKeys.ANNOTATION_FREE))));
        return new NodeMetadata(NodeLabels.of(topology, catalog), annotations);
    }

    private String freeAnnotation(NodeTopology topology, Set<String> held, Instant now, String published) {
        var free = new HashSet<String>();
        for (var device : topology.devices()) {
            if (!held.contains(device.uuid())) {
                free.add(device.uuid());
            }
        }
        if (published != null) {
            try {
                var previous = freeCodec.decode(published);
                if (previous.uuids().equals(free) && previous.readAt().plus(freeRefresh).isAfter(now)) {
                    return published;
                }
            } catch (InventoryFormatException e) {
                // Not ours or damaged: replace it.
            }
        }
        return freeCodec.encode(new FreeDevices(free, now));
    }
}
