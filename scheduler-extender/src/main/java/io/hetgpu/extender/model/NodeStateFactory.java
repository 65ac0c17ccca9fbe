package io.hetgpu.extender.model;

import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds {@link NodeState}s from node facts and the pods bound to each node.
 *
 * <p>Decoding an inventory is the most expensive step per node, and inventories change only when a
 * device's health does, so the decoded form is kept per node and reused while the node's
 * resourceVersion (or, failing that, the annotation text) is unchanged. The cache is derived data
 * only: any replica rebuilds it from what it sees.
 *
 * <p>Free devices are the {@code hetgpu.io/gpu-free} annotation's, minus those promised to pods bound
 * after it was read; which devices those pods get is predicted with the same allocator the device
 * plugin runs, in binding order. Without the annotation every bound pod is subtracted that way.
 */
public final class NodeStateFactory {

    /** Bounds the cache when nodes come only from requests and removals are never seen. */
    private static final int MAX_CACHED_NODES = 100_000;

    private final CardCatalog catalog;
    private final String rackLabel;
    private final InventoryCodec inventoryCodec = new InventoryCodec();
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();

    private record Cached(String resourceVersion, String inventory, NodeGpus gpus, String free, FreeList freeList) {
    }

    /** The decoded {@code hetgpu.io/gpu-free} annotation: positions listed, and when they were read. */
    private record FreeList(long mask, Instant readAt) {
        static final FreeList ABSENT = new FreeList(-1L, Instant.MIN);
    }

    public NodeStateFactory(CardCatalog catalog, String rackLabel) {
        this.catalog = catalog;
        this.rackLabel = rackLabel;
    }

    public NodeState state(NodeFacts node, List<BoundPod> boundPods) {
        var cached = decoded(node);
        long free = freeMask(cached.gpus(), cached.freeList(), boundPods);
        return new NodeState(node.name(), node.labels().getOrDefault(rackLabel, ""),
                node.labels().getOrDefault(HetgpuKeys.LABEL_ZONE, ""), cached.gpus(), free);
    }

    NodeGpus gpus(NodeFacts node) {
        return decoded(node).gpus();
    }

    /** The node's annotations decoded, from the cache while the node (or at least its annotations) are unchanged. */
    private Cached decoded(NodeFacts node) {
        var cached = cache.get(node.name());
        if (cached != null && (!node.resourceVersion().isEmpty() && cached.resourceVersion().equals(node.resourceVersion())
                || Objects.equals(cached.inventory(), node.inventory()) && Objects.equals(cached.free(), node.free()))) {
            return cached;
        }
        NodeGpus gpus;
        if (node.inventory() == null) {
            gpus = NodeGpus.NONE;
        } else if (cached != null && node.inventory().equals(cached.inventory())) {
            gpus = cached.gpus();
        } else {
            try {
                gpus = NodeGpus.of(inventoryCodec.decode(node.inventory()), catalog);
            } catch (InventoryFormatException e) {
                gpus = NodeGpus.unreadable(HetgpuKeys.ANNOTATION_INVENTORY + " unreadable: " + e.getMessage());
            }
        }
        var fresh = new Cached(node.resourceVersion(), node.inventory(), gpus, node.free(), freeList(gpus, node.free()));
        if (cache.size() >= MAX_CACHED_NODES) {
            cache.clear();
        }
        cache.put(node.name(), fresh);
        return fresh;
    }

    private FreeList freeList(NodeGpus gpus, String annotation) {
        if (annotation == null || gpus.size() == 0) {
            return FreeList.ABSENT;
        }
        try {
            var free = freeCodec.decode(annotation);
            long listed = 0;
            for (var uuid : free.uuids()) {
                var position = gpus.topology().positionOf(uuid);
                if (position.isPresent()) {
                    listed |= 1L << position.get();
                }
            }
            return new FreeList(listed, free.readAt());
        } catch (InventoryFormatException e) {
            // An unreadable free list is treated as absent: every bound pod is subtracted instead.
            return FreeList.ABSENT;
        }
    }

    private static long freeMask(NodeGpus gpus, FreeList freeList, List<BoundPod> boundPods) {
        if (gpus.size() == 0) {
            return 0;
        }
        long free = gpus.healthyMask() & freeList.mask();
        if (boundPods.isEmpty()) {
            return free;
        }
        final Instant since = freeList.readAt();
        var promised = boundPods.stream()
                .filter(pod -> pod.gpuCount() > 0)
                .filter(pod -> pod.boundAt().isAfter(since))
                .sorted(Comparator.comparing(BoundPod::boundAt).thenComparing(BoundPod::uid))
                .toList();
        for (var pod : promised) {
            int size = Math.min(pod.gpuCount(), Long.bitCount(free));
            var set = gpus.allocator().choose(free, 0, size, pod.requireNvlink());
            if (set.isEmpty()) {
                set = gpus.allocator().choose(free, 0, size, false);
            }
            for (int position : set.orElseThrow().positions()) {
                free &= ~(1L << position);
            }
        }
        return free;
    }
}
