package io.hetgpu.deviceplugin.devices;

import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import io.hetgpu.gpu.tier.CardTier;
import io.hetgpu.gpu.allocation.GpuSetAllocator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * kubelet's GetPreferredAllocation in terms of device IDs: maps the UUIDs kubelet sends to topology
 * positions, asks the shared {@link GpuSetAllocator} (the same one the scheduler extender predicts
 * with), and maps the chosen positions back. Built once: the links of a node never change.
 */
public final class PreferredAllocation {

    private final GpuSetAllocator allocator;
    private final NodeTopology topology;
    private final List<String> uuids;
    /** Each device's tier by the plugin's table, for a pod that names its weakest acceptable card. */
    private final List<CardTier> tiers;
    private final Map<String, Integer> positions = new HashMap<>();

    /** With the built-in tier table. */
    public PreferredAllocation(NodeTopology topology) {
        this(topology, CardCatalog.defaults());
    }

    /** @param catalog the tier table the plugin labels its node with, the admin's overrides included */
    public PreferredAllocation(NodeTopology topology, CardCatalog catalog) {
        this.allocator = new GpuSetAllocator(topology.links());
        this.topology = topology;
        this.uuids = topology.devices().stream().map(device -> device.uuid()).toList();
        this.tiers = topology.devices().stream().map(device -> catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB())).toList();
        for (int i = 0; i < uuids.size(); i++) {
            positions.put(uuids.get(i), i);
        }
    }

    /**
     * The best-connected {@code size} devices among {@code available} that include {@code mustInclude}.
     * When no such set exists (kubelet sent fewer devices than it asks for, or IDs this node does not
     * have) it answers with kubelet's own order rather than an error: an error here fails the pod's
     * admission, while a plain answer lets kubelet decide as it would without a plugin preference.
     */
    public List<String> choose(Collection<String> available, Collection<String> mustInclude, int size) {
        var chosen = allocator.choose(mask(available), mask(mustInclude), size, false);
        if (chosen.isPresent() && knowsAll(available) && knowsAll(mustInclude)) {
            return chosen.get().positions().stream().map(uuids::get).toList();
        }
        var fallback = new LinkedHashSet<String>(mustInclude);
        fallback.addAll(available);
        return new ArrayList<>(fallback).subList(0, Math.min(Math.max(size, 0), fallback.size()));
    }

    /**
     * {@link #choose(Collection, Collection, int)} among the available devices that meet the pod's card requirements,
     * when enough of them do (and every one kubelet must include); among all available ones otherwise, as kubelet
     * would choose without a preference.
     */
    public List<String> choose(Collection<String> available, Collection<String> mustInclude, int size, CardRequirements cards) {
        if (!cards.isAny()) {
            var suitable = available.stream().filter(id -> positions.containsKey(id)
                    && cards.admits(topology.device(positions.get(id)), tiers.get(positions.get(id)))).toList();
            if (suitable.size() >= size && suitable.containsAll(mustInclude)) {
                return choose(suitable, mustInclude, size);
            }
        }
        return choose(available, mustInclude, size);
    }

    private long mask(Collection<String> ids) {
        long mask = 0;
        for (var id : ids) {
            var position = positions.get(id);
            if (position != null) {
                mask |= 1L << position;
            }
        }
        return mask;
    }

    private boolean knowsAll(Collection<String> ids) {
        return positions.keySet().containsAll(ids);
    }
}
