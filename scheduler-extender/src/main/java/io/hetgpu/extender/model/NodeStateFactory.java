package io.hetgpu.extender.model;

import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.inventory.NvidiaKeys;
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
 * resourceVersion (or, failing that, the annotation text) is unchanged. So is the node's whole state
 * while no pod is bound to it since its free list was read: a 5,000-node request then costs one
 * lookup per node. The cache is derived data only: any replica rebuilds it from what it sees.
 *
 * <p>Free devices are the {@code hetgpu.io/gpu-free} annotation's, minus those promised to pods bound
 * after it was read; which devices those pods get is predicted with the same allocator the device
 * plugin runs, in binding order. Without the annotation every bound pod is subtracted that way; so on a
 * node not served by hetgpu's device plugin (which has no such annotation) the free count is the
 * allocatable count minus the GPUs of the pods bound there. Which source a node's GPUs come from is
 * {@link NodeGpuReader}'s rule.
 */
public final class NodeStateFactory {

    /**
     * Bounds the cache when nodes come only from requests and removals are never seen (with an API server,
     * removed nodes are {@linkplain #forget forgotten}).
     */
    private static final int MAX_CACHED_NODES = 100_000;

    private final String rackLabel;
    private final NodeGpuReader reader;
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();

    /**
     * @param facts the facts it was built from (a view that hands out the same object while the node is
     *              unchanged lets the next lookup skip even the string comparisons)
     * @param base  the node's state with nothing bound since the free list was read
     */
    private record Cached(NodeFacts facts, NodeGpus gpus, FreeList freeList, NodeState base) {
    }

    /** The decoded {@code hetgpu.io/gpu-free} annotation: positions listed, and when they were read. */
    private record FreeList(long mask, Instant readAt) {
        static final FreeList ABSENT = new FreeList(-1L, Instant.MIN);
    }

    public NodeStateFactory(CardCatalog catalog, String rackLabel) {
        this(catalog, rackLabel, HetgpuKeys.DEFAULT_RESOURCE_NAME);
    }

    /** @param resourceName the GPU resource whose allocatable count tells a node's GPUs when nothing else does */
    public NodeStateFactory(CardCatalog catalog, String rackLabel, String resourceName) {
        this.rackLabel = rackLabel;
        this.reader = new NodeGpuReader(catalog, resourceName);
    }

    public NodeState state(NodeFacts node, List<BoundPod> boundPods) {
        var cached = decoded(node);
        var base = cached.base();
        if (base.gpus().size() == 0 || !anyPromisedSince(cached.freeList().readAt(), boundPods)) {
            // The common case: one shared, immutable state per node until the node or its promises change.
            return base;
        }
        return new NodeState(base.name(), base.rack(), base.zone(), base.gpus(), freeMask(cached.gpus(), cached.freeList(), boundPods));
    }

    /** Drops what was decoded for a node the cluster no longer has. */
    public void forget(String nodeName) {
        cache.remove(nodeName);
    }

    /** How many nodes' decoded annotations are kept. */
    public int cachedNodes() {
        return cache.size();
    }

    /** Whether a pod bound after the free list was read holds GPUs the list still shows free. */
    private static boolean anyPromisedSince(Instant readAt, List<BoundPod> boundPods) {
        for (var pod : boundPods) {
            if (pod.gpuCount() > 0 && pod.mayBeMissingFrom(readAt)) {
                return true;
            }
        }
        return false;
    }

    NodeGpus gpus(NodeFacts node) {
        return decoded(node).gpus();
    }

    /** The node's annotations decoded, from the cache while the node (or at least its annotations) are unchanged. */
    private Cached decoded(NodeFacts node) {
        var cached = cache.get(node.name());
        if (cached != null && (cached.facts() == node
                || !node.resourceVersion().isEmpty() && cached.facts().resourceVersion().equals(node.resourceVersion()))) {
            // A resourceVersion names one version of the whole object: labels included.
            return cached;
        }
        NodeGpus gpus;
        FreeList freeList;
        if (cached != null && sameGpuFacts(cached, node)) {
            gpus = cached.gpus();
            freeList = Objects.equals(cached.facts().free(), node.free()) ? cached.freeList() : freeList(gpus, node.free());
        } else {
            gpus = reader.read(node);
            freeList = freeList(gpus, node.free());
        }
        var base = new NodeState(node.name(), node.labels().getOrDefault(rackLabel, ""),
                node.labels().getOrDefault(HetgpuKeys.LABEL_ZONE, ""), gpus, freeMask(gpus, freeList, List.of()));
        var fresh = new Cached(node, gpus, freeList, base);
        if (cache.size() >= MAX_CACHED_NODES) {
            cache.clear();
        }
        cache.put(node.name(), fresh);
        return fresh;
    }

    /** Whether everything a node's GPUs are read from is as it was: the inventory, the allocatable count, GFD's labels. */
    private static boolean sameGpuFacts(Cached cached, NodeFacts now) {
        var before = cached.facts();
        if (!Objects.equals(before.inventory(), now.inventory())) {
            return false;
        }
        if (cached.gpus().source() instanceof NodeGpuSource.HetgpuInventory) {
            // A readable inventory is the whole story: labels and allocatable count are not read.
            return true;
        }
        if (!Objects.equals(before.gpuAllocatable(), now.gpuAllocatable())) {
            return false;
        }
        for (var key : FEATURE_DISCOVERY_KEYS) {
            if (!Objects.equals(before.labels().get(key), now.labels().get(key))) {
                return false;
            }
        }
        return true;
    }

    private static final List<String> FEATURE_DISCOVERY_KEYS = List.of(NvidiaKeys.GFD_PRODUCT, NvidiaKeys.GFD_MEMORY,
            NvidiaKeys.GFD_COUNT, NvidiaKeys.GFD_COMPUTE_MAJOR, NvidiaKeys.GFD_COMPUTE_MINOR, NvidiaKeys.GFD_REPLICAS,
            NvidiaKeys.GFD_CLIQUE);

    private FreeList freeList(NodeGpus gpus, String annotation) {
        if (annotation == null || gpus.size() == 0 || !(gpus.source() instanceof NodeGpuSource.HetgpuInventory)) {
            // Only hetgpu's device plugin writes the free list, and only of its own inventory's devices.
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
                .filter(pod -> pod.mayBeMissingFrom(since))
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
