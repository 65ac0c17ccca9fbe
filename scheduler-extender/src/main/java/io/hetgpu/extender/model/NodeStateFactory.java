package io.hetgpu.extender.model;

import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds {@link NodeState}s from node facts and the pods bound to each node.
 *
 * <p>Decoding an inventory is the most expensive step per node, and inventories change only when a
 * device's health does, so the decoded form is kept per node and reused while the node's
 * resourceVersion (or, failing that, the annotation text) is unchanged. So is the node's whole state
 * while no pod is bound to it since its free list was read: a 5,000-node request then costs one
 * lookup per node. The cache is derived data only: any replica rebuilds it from what it sees.
 *
 * <p>Free devices are the {@code hetgpu.io/gpu-free} annotation's, minus the devices recorded on the pods
 * the bind verb bound ({@code hetgpu.io/gpu-devices}, whenever they were bound: a record is exact, and
 * subtracting devices the list already leaves out changes nothing, while it covers a pod kubelet has not
 * admitted yet although the list was read after its binding), minus those promised to pods without a
 * record bound after the list was read; which devices those get is predicted with the same allocator the
 * device plugin runs, in binding order. Without the free list every bound pod is subtracted that way; so
 * on a node not served by hetgpu's device plugin (which has no such annotation) the free count is the
 * allocatable count minus the GPUs of the pods bound there. On a node a DRA driver publishes GPUs for, the devices of
 * allocated claims are the record: each pod holds the devices its claims' allocations name
 * ({@link io.hetgpu.extender.cluster.ClaimHoldings}), exact as a bind's record is. Which source a node's GPUs come from is {@link NodeGpuReader}'s rule.
 *
 * <p>A record on a pod not bound yet ({@link BoundPod#binding()}) is a bind in flight, this process's or another's (a
 * second replica, or the old scheduler leader during a failover): its devices count as held while the record is younger
 * than {@link #recordLifetime} (kube-scheduler's {@code httpTimeout} and a margin, beyond which every bind has ended:
 * the bind verb gives up within that timeout), and not at all after. Such a pod is never predicted: without a record
 * readable on this node, it holds nothing here.
 *
 * <p>Reading one node never fails a request: annotations that cannot be read (the inventory with nothing
 * else to describe the node's GPUs, or the free list) or any failure while reading them make that node
 * <em>unreadable</em>: a state whose GPUs carry the reason, which the policy refuses GPU pods with and
 * scores last for the others. Each unreadable node version (resourceVersion) is logged and counted once.
 */
public final class NodeStateFactory {

    private static final Logger LOG = LoggerFactory.getLogger(NodeStateFactory.class);

    /**
     * Bounds the cache when nodes come only from requests and removals are never seen (with an API server,
     * removed nodes are {@linkplain #forget forgotten}).
     */
    private static final int MAX_CACHED_NODES = 100_000;

    /** Added to kube-scheduler's httpTimeout for a record's lifetime: clock skew between replicas, an answer in flight. */
    static final Duration RECORD_MARGIN = Duration.ofSeconds(2);

    private final String rackLabel;
    private final NodeGpuReader reader;
    private final Duration recordLifetime;
    private final Clock clock;
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();
    /**
     * One String per rack and zone name, shared by every node state of that place: the job score looks a node's rack and
     * zone up for thousands of nodes per member of a planned job, and a few hundred shared names stay in the CPU's cache
     * where a copy per node is a cache miss per node.
     */
    private final ConcurrentHashMap<String, String> placeNames = new ConcurrentHashMap<>();
    private final LongAdder unreadable = new LongAdder();

    /**
     * @param facts the facts it was built from (a view that hands out the same object while the node is
     *              unchanged lets the next lookup skip even the string comparisons)
     * @param base  the node's state with nothing bound since the free list was read
     */
    private record Cached(NodeFacts facts, NodeGpus gpus, FreeList freeList, NodeState base) {
    }

    /**
     * The decoded {@code hetgpu.io/gpu-free} annotation: positions listed, and when they were read.
     *
     * @param problem why the annotation could not be read ("" when it could, or is absent)
     */
    private record FreeList(long mask, Instant readAt, String problem) {
        static final FreeList ABSENT = new FreeList(-1L, Instant.MIN, "");
    }

    public NodeStateFactory(CardCatalog catalog, String rackLabel) {
        this(catalog, rackLabel, HetgpuKeys.DEFAULT_RESOURCE_NAME);
    }

    /** @param resourceName the GPU resource whose allocatable count tells a node's GPUs when nothing else does */
    public NodeStateFactory(CardCatalog catalog, String rackLabel, String resourceName) {
        this(catalog, rackLabel, resourceName, recordLifetime(Duration.ofSeconds(5)), Clock.systemUTC());
    }

    /**
     * @param recordLifetime how long a record on a pod not bound yet holds its devices ({@link #recordLifetime(Duration)})
     * @param clock          what "now" is for that
     */
    public NodeStateFactory(CardCatalog catalog, String rackLabel, String resourceName, Duration recordLifetime, Clock clock) {
        this.rackLabel = rackLabel;
        this.reader = new NodeGpuReader(catalog, resourceName);
        this.recordLifetime = recordLifetime;
        this.clock = clock;
    }

    /** How long a bind's record holds its devices before its pod is bound: past that, every bind that wrote it has ended. */
    public static Duration recordLifetime(Duration httpTimeout) {
        return httpTimeout.plus(RECORD_MARGIN);
    }

    public NodeState state(NodeFacts node, List<BoundPod> boundPods) {
        var cached = decoded(node);
        boundPods = holding(cached.gpus(), boundPods);
        var base = cached.base();
        if (base.gpus().size() == 0 || !anyPromisedSince(cached.freeList().readAt(), base.gpus(), boundPods)
                && (base.freeMask() & recorded(base.gpus(), boundPods)) == 0 && !anyReleased(cached.freeList().readAt(), boundPods)) {
            // The common case: one shared, immutable state per node until the node or its promises change.
            return base;
        }
        return new NodeState(base.name(), base.rack(), base.zone(), base.gpus(), freeMask(cached.gpus(), cached.freeList(), boundPods));
    }

    /**
     * Whether {@link #state} of a node with these pods may change with time alone: a bind in flight holds its devices
     * only while its record is fresh. Otherwise the same facts and pods give the same state.
     */
    public static boolean changesWithTime(List<BoundPod> boundPods) {
        for (var pod : boundPods) {
            if (pod.binding()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The pods that hold GPUs here: the bound ones, and binds in flight whose record is fresh and names this node's
     * devices (a stale or unreadable record holds nothing). The same list when there is no bind in flight.
     */
    private List<BoundPod> holding(NodeGpus gpus, List<BoundPod> boundPods) {
        // Called for every node of every request: a plain loop, no stream, for the common case of no bind in flight.
        boolean anyBinding = false;
        for (var pod : boundPods) {
            anyBinding |= pod.binding();
        }
        if (!anyBinding) {
            return boundPods;
        }
        var now = clock.instant();
        return boundPods.stream()
                .filter(pod -> !pod.binding() || pod.freshBinding(now, recordLifetime) && gpus.maskOf(pod.devices()).isPresent())
                .toList();
    }

    /** Drops what was decoded for a node the cluster no longer has. */
    public void forget(String nodeName) {
        cache.remove(nodeName);
    }

    /**
     * How many node versions were found unreadable: each node once per resourceVersion (or, for nodes without
     * one, per reason), however many requests name it.
     */
    public long unreadableNodeVersions() {
        return unreadable.sum();
    }

    /** How many nodes' decoded annotations are kept. */
    public int cachedNodes() {
        return cache.size();
    }

    /**
     * Whether a pod let its GPUs go lately. The free list can show them taken even when read after the release: kubelet
     * frees a deleted pod's devices in its device manager lazily (at its next allocation), and the plugin reads them
     * from there.
     */
    private static boolean anyReleased(Instant readAt, List<BoundPod> boundPods) {
        for (var pod : boundPods) {
            if (pod.gpuCount() > 0 && pod.releasedAfter(readAt)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a pod without a record of its devices, bound after the free list was read, holds GPUs the list may still show free. */
    private static boolean anyPromisedSince(Instant readAt, NodeGpus gpus, List<BoundPod> boundPods) {
        for (var pod : boundPods) {
            if (!pod.released() && pod.gpuCount() > 0 && pod.mayBeMissingFrom(readAt) && gpus.maskOf(pod.devices()).isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /** The devices the bound pods' records name. */
    private static long recorded(NodeGpus gpus, List<BoundPod> boundPods) {
        long held = 0;
        for (var pod : boundPods) {
            if (pod.assigned() && !pod.released()) {
                held |= gpus.maskOf(pod.devices()).orElse(0);
            }
        }
        return held;
    }

    NodeGpus gpus(NodeFacts node) {
        return decoded(node).gpus();
    }

    /** The node's annotations decoded, from the cache while the node (or at least its annotations) are unchanged. */
    private Cached decoded(NodeFacts node) {
        var cached = cache.get(node.name());
        if (cached != null && (cached.facts() == node
                || !node.resourceVersion().isEmpty() && cached.facts().resourceVersion().equals(node.resourceVersion())
                && sameSlices(cached.facts(), node))) {
            // A resourceVersion names one version of the whole object: labels included. Not its ResourceSlices, which are
            // objects of their own.
            return cached;
        }
        Cached fresh;
        try {
            fresh = read(node, cached);
        } catch (RuntimeException e) {
            // A case the readers did not foresee: still this node's problem, and only its own.
            var unreadableGpus = NodeGpus.unreadable("GPU annotations unreadable: " + e);
            fresh = new Cached(node, unreadableGpus, FreeList.ABSENT, new NodeState(node.name(), "", "", unreadableGpus, 0));
        }
        var damage = damage(fresh);
        if (!damage.isEmpty() && !(cached != null && damage.equals(damage(cached))
                && cached.facts().resourceVersion().equals(node.resourceVersion()))) {
            unreadable.increment();
            LOG.warn("node {} (resourceVersion {}) has GPU annotations the extender cannot read: {}", node.name(),
                    node.resourceVersion().isEmpty() ? "none" : node.resourceVersion(), damage);
        }
        if (cache.size() >= MAX_CACHED_NODES) {
            cache.clear();
        }
        cache.put(node.name(), fresh);
        return fresh;
    }

    private Cached read(NodeFacts node, Cached cached) {
        NodeGpus gpus;
        FreeList freeList;
        if (cached != null && sameGpuFacts(cached, node)) {
            gpus = cached.gpus();
            freeList = Objects.equals(cached.facts().free(), node.free()) ? cached.freeList() : freeList(gpus, node.free());
        } else {
            gpus = reader.read(node);
            freeList = freeList(gpus, node.free());
        }
        // A free list that cannot be read says nothing of which devices pods hold: the node cannot be judged.
        var judged = freeList.problem().isEmpty() ? gpus : NodeGpus.unreadable(freeList.problem());
        var base = new NodeState(node.name(), placeName(node.labels().getOrDefault(rackLabel, "")),
                placeName(node.labels().getOrDefault(HetgpuKeys.LABEL_ZONE, "")), judged, freeMask(judged, freeList, List.of()));
        return new Cached(node, gpus, freeList, base);
    }

    private String placeName(String name) {
        if (placeNames.size() >= MAX_CACHED_NODES) {
            // More places than nodes can only be churn: start over rather than grow.
            placeNames.clear();
        }
        var shared = placeNames.putIfAbsent(name, name);
        return shared == null ? name : shared;
    }

    /**
     * Why some of the node's annotations could not be read, or "": the node is unreadable (its GPUs carry the
     * problem), or hetgpu's inventory is there but the GPUs came from another source (which says why).
     */
    private static String damage(Cached cached) {
        var judged = cached.base().gpus();
        if (!judged.problem().isEmpty()) {
            return judged.problem();
        }
        var inventoryUnread = cached.facts().inventory() != null && !(cached.gpus().source() instanceof NodeGpuSource.HetgpuInventory);
        return inventoryUnread ? "read as " + cached.gpus().summary() : "";
    }

    /** Whether everything a node's GPUs are read from is as it was: the inventory, the allocatable count, GFD's labels. */
    private static boolean sameGpuFacts(Cached cached, NodeFacts now) {
        var before = cached.facts();
        if (!Objects.equals(before.inventory(), now.inventory())) {
            return false;
        }
        if (!sameSlices(before, now) && !(cached.gpus().source() instanceof NodeGpuSource.HetgpuInventory)) {
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

    /** Whether the node's ResourceSlices publish the same GPUs: the same object while they are unchanged. */
    private static boolean sameSlices(NodeFacts before, NodeFacts now) {
        return before.slices() == now.slices() || before.slices().equals(now.slices());
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
            return new FreeList(listed, free.readAt(), "");
        } catch (InventoryFormatException e) {
            return new FreeList(-1L, Instant.MIN, HetgpuKeys.ANNOTATION_FREE + " unreadable: " + e.getMessage());
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
        var firstRelease = Instant.MAX;
        if (anyReleased(since, boundPods)) {
            // What the released pods held, recorded or (as the plugin would have chosen) predicted among all of them.
            var holdings = DeviceHoldings.predict(gpus, boundPods);
            for (var pod : boundPods) {
                if (pod.releasedAfter(since)) {
                    free |= holdings.getOrDefault(pod.uid(), 0L) & gpus.healthyMask();
                    firstRelease = firstRelease.isBefore(pod.releasedAt()) ? firstRelease : pod.releasedAt();
                }
            }
        }
        free &= ~recorded(gpus, boundPods);
        // A pod without recorded devices bound after a release may hold the released devices that were just counted free.
        final Instant reusableSince = firstRelease;
        var promised = boundPods.stream()
                .filter(pod -> !pod.released())
                .filter(pod -> pod.gpuCount() > 0)
                .filter(pod -> gpus.maskOf(pod.devices()).isEmpty())
                .filter(pod -> pod.mayBeMissingFrom(since) || pod.boundAt().isAfter(reusableSince))
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
