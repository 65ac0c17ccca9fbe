package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DraLookup;
import io.hetgpu.extender.model.NodeSlices;
import io.hetgpu.extender.model.SliceReader;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DRA's objects as informers see them, where the cluster serves {@code resource.k8s.io/v1} (asked of API discovery at
 * start, retried while the API server does not answer): ResourceSlices, read per node into the GPUs they publish
 * ({@link SliceReader}); ResourceClaims, indexed by the node their allocation is on; DeviceClasses, by name and by the
 * extended resource they serve. Where the cluster does not serve it, nothing is followed and the extender works as
 * before, every node's GPUs read from device plugins.
 */
public final class DraInformers implements DraLookup, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DraInformers.class);

    /** The API followed: structured parameters, GA since Kubernetes 1.34. */
    public static final String GROUP_VERSION = "resource.k8s.io/v1";
    private static final List<String> PLURALS = List.of("resourceslices", "resourceclaims", "deviceclasses");
    private static final String BY_NODE = "node";
    private static final String BY_POOL = "pool";
    private static final String BY_EXTENDED_RESOURCE = "extendedResourceName";
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    /** Short: until discovery answers, the extender is not ready. */
    private static final Duration LAST_RETRY = Duration.ofSeconds(8);

    /** Told, on an informer's thread, what changed: the view republishes those nodes. */
    public interface Listener {
        void slicesChanged(String node);

        void claimsChanged(Set<String> nodes);
    }

    private final KubernetesClient client;
    private final CardCatalog catalog;
    private final ExceptionHandler retry;
    private final ScheduledExecutorService discovery = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("dra-discovery").factory());
    private final CompletableFuture<Void> listed = new CompletableFuture<>();
    private final ConcurrentHashMap<String, NodeSlices> slicesByNode = new ConcurrentHashMap<>();
    private final HandledKeys slicesHandled = new HandledKeys();
    private final HandledKeys claimsHandled = new HandledKeys();
    private volatile Listener listener = new Listener() {
        @Override
        public void slicesChanged(String node) {
        }

        @Override
        public void claimsChanged(Set<String> nodes) {
        }
    };
    /** Null until discovery answered; false when the cluster does not serve the API. */
    private volatile Boolean served;
    private volatile String lastFailure = "";
    private volatile SharedIndexInformer<ResourceSlice> slices;
    private volatile SharedIndexInformer<ResourceClaim> claims;
    private volatile SharedIndexInformer<DeviceClass> classes;
    private volatile boolean closed;

    /** @param retry whether an informer tries again after a failure (the view's policy) */
    public DraInformers(KubernetesClient client, CardCatalog catalog, ExceptionHandler retry) {
        this.client = client;
        this.catalog = catalog;
        this.retry = retry;
    }

    /** The resources followed, as RBAC names them ({@code resource.k8s.io/resourceslices}): listed and watched. */
    public static List<String> resources() {
        return PLURALS.stream().map(plural -> "resource.k8s.io/" + plural).toList();
    }

    /** Who is told of changes; set before {@link #start}. */
    public void listener(Listener newListener) {
        this.listener = newListener;
    }

    /** Asks discovery, then follows the objects if served. Completes once they are listed and handled, or known not served. */
    public CompletableFuture<Void> start() {
        discovery.execute(() -> ask(FIRST_RETRY));
        return listed;
    }

    /** Whether the cluster serves the API (false also while discovery has not answered). */
    public boolean served() {
        return Boolean.TRUE.equals(served);
    }

    private void ask(Duration wait) {
        if (closed) {
            return;
        }
        try {
            var resources = client.getApiResources(GROUP_VERSION);
            var names = resources == null || resources.getResources() == null ? Set.<String>of()
                    : resources.getResources().stream().map(resource -> resource.getName()).collect(java.util.stream.Collectors.toSet());
            if (!names.containsAll(PLURALS)) {
                served = false;
                listed.complete(null);
                LOG.info("DRA: the cluster does not serve {} (resourceslices, resourceclaims, deviceclasses): GPUs are read from "
                        + "device plugins only", GROUP_VERSION);
                return;
            }
            served = true;
            follow();
        } catch (RuntimeException e) {
            lastFailure = ApiFaults.describe(e);
            LOG.warn("DRA: asking the API server whether it serves {} failed, retrying in {} s: {}", GROUP_VERSION, wait.toSeconds(), lastFailure);
            var next = wait.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : wait.multipliedBy(2);
            discovery.schedule(() -> ask(next), wait.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private synchronized void follow() {
        if (closed) {
            return;
        }
        // Built in locals and published to the fields only once indexed: the node and pod handlers read the fields from
        // the informers' threads, and an informer seen before its indexers are added answers "index node doesn't exist",
        // which fails that handler and leaves its object out of the view (and the first list never caught up).
        var slices = client.resources(ResourceSlice.class).runnableInformer(0);
        var claims = client.resources(ResourceClaim.class).inAnyNamespace().runnableInformer(0);
        var classes = client.resources(DeviceClass.class).runnableInformer(0);
        slices.addIndexers(Map.of(
                BY_NODE, slice -> slice.getSpec() == null || slice.getSpec().getNodeName() == null ? List.of() : List.of(slice.getSpec().getNodeName()),
                BY_POOL, slice -> slice.getSpec() == null || slice.getSpec().getPool() == null || slice.getSpec().getNodeName() == null
                        ? List.of() : List.of(poolKey(slice.getSpec().getDriver(), slice.getSpec().getPool().getName()))));
        // A claim is indexed once, when it is stored: by the node its allocation names, else by the pools of its devices,
        // which are matched to a node when asked. Indexed by the node a pool's slice named at that moment, a claim listed
        // before that slice would never be counted on its node.
        claims.addIndexers(Map.of(
                BY_NODE, claim -> List.copyOf(ClaimHoldings.nodesOf(claim, pool -> null)),
                BY_POOL, claim -> ClaimHoldings.nodesOf(claim, pool -> null).isEmpty()
                        ? ClaimHoldings.poolsOf(claim).stream().map(pool -> poolKey(pool.get(0), pool.get(1))).toList() : List.of()));
        classes.addIndexers(Map.of(BY_EXTENDED_RESOURCE, deviceClass -> deviceClass.getSpec() == null
                || deviceClass.getSpec().getExtendedResourceName() == null ? List.of() : List.of(deviceClass.getSpec().getExtendedResourceName())));
        slices.addEventHandler(slicesHandled.handling(this::reread));
        claims.addEventHandler(claimsHandled.handling(this::changed));
        this.slices = slices;
        this.claims = claims;
        this.classes = classes;
        for (var informer : List.of(slices, claims, classes)) {
            informer.exceptionHandler((isStarted, failure) -> {
                lastFailure = ApiFaults.describe(failure);
                boolean again = retry.retryAfterException(isStarted, failure);
                LOG.warn("DRA: {} from the API server failed, {}: {}", isStarted ? "following" : "listing",
                        again ? "retrying with backoff" : "giving up", lastFailure);
                return again;
            });
        }
        CompletableFuture.allOf(slices.start().toCompletableFuture(), claims.start().toCompletableFuture(),
                classes.start().toCompletableFuture()).thenCompose(done -> whenHandled()).whenComplete((done, failure) -> {
            if (failure == null) {
                LOG.info("DRA: ResourceSlices, ResourceClaims and DeviceClasses listed from the API server");
                listed.complete(null);
            } else {
                listed.completeExceptionally(failure);
            }
        });
    }

    private CompletableFuture<Void> whenHandled() {
        if (closed || handled()) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS))
                .thenCompose(waited -> whenHandled());
    }

    private boolean handled() {
        return slicesHandled.caughtUpWith(slices.getStore().listKeys()) && claimsHandled.caughtUpWith(claims.getStore().listKeys());
    }

    /** Whether discovery has answered and, where the API is served, every informer has listed and been handled. */
    public boolean synced() {
        // Not before the start's future is complete: whoever waits on it sees it done once this says synced.
        if (served == null || !listed.isDone() || listed.isCompletedExceptionally()) {
            return false;
        }
        return !served || slices != null && slices.hasSynced() && claims.hasSynced() && classes.hasSynced() && handled();
    }

    /** What is awaited, or empty once synced. */
    public Optional<String> unsynced() {
        if (synced()) {
            return Optional.empty();
        }
        var failure = lastFailure.isEmpty() ? "" : "; last failure " + lastFailure;
        return Optional.of(served == null ? "whether the cluster serves " + GROUP_VERSION + " not yet known" + failure
                : "ResourceSlices, ResourceClaims and DeviceClasses not yet listed" + failure);
    }

    /** The GPUs the node's slices publish; {@link NodeSlices#NONE} when none do. The same object while they are unchanged. */
    public NodeSlices slicesOf(String node) {
        return slicesByNode.getOrDefault(node, NodeSlices.NONE);
    }

    /** The holdings of the claims allocated on the node. */
    public List<BoundPod> claimHoldings(String node, Function<String, io.fabric8.kubernetes.api.model.Pod> pods) {
        var informer = claims;
        if (informer == null) {
            return List.of();
        }
        var onNode = new LinkedHashMap<String, ResourceClaim>();
        informer.getIndexer().byIndex(BY_NODE, node).forEach(claim -> onNode.put(Cache.metaNamespaceKeyFunc(claim), claim));
        var published = slices;
        if (published != null) {
            var pools = new LinkedHashSet<String>();
            for (var slice : published.getIndexer().byIndex(BY_NODE, node)) {
                var pool = slice.getSpec().getPool() == null ? null : poolKey(slice.getSpec().getDriver(), slice.getSpec().getPool().getName());
                if (pool != null && pools.add(pool)) {
                    informer.getIndexer().byIndex(BY_POOL, pool).forEach(claim -> onNode.putIfAbsent(Cache.metaNamespaceKeyFunc(claim), claim));
                }
            }
        }
        return onNode.isEmpty() ? List.of() : ClaimHoldings.of(onNode.values(), pods);
    }

    /**
     * The nodes the pod's claims are allocated on: the claims of its namespace named in its spec or status, the one
     * kube-scheduler made for its extended resource included.
     */
    public Set<String> nodesOfClaims(io.fabric8.kubernetes.api.model.Pod pod) {
        var informer = claims;
        var nodes = new LinkedHashSet<String>();
        var status = pod.getStatus();
        var extended = status == null || status.getExtendedResourceClaimStatus() == null ? null
                : status.getExtendedResourceClaimStatus().getResourceClaimName();
        if (informer == null || pod.getSpec() == null || (pod.getSpec().getResourceClaims() == null && extended == null)) {
            return nodes;
        }
        var namespace = pod.getMetadata().getNamespace();
        var names = new LinkedHashSet<String>();
        if (extended != null) {
            // The claim kube-scheduler made for a plain GPU request a DeviceClass serves.
            names.add(extended);
        }
        (pod.getSpec().getResourceClaims() == null ? List.<io.fabric8.kubernetes.api.model.PodResourceClaim>of()
                : pod.getSpec().getResourceClaims()).stream().limit(io.hetgpu.extender.model.ClaimRequestReader.MAX_CLAIMS)
                .filter(entry -> entry != null && entry.getResourceClaimName() != null).forEach(entry -> names.add(entry.getResourceClaimName()));
        if (pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null) {
            pod.getStatus().getResourceClaimStatuses().stream().limit(io.hetgpu.extender.model.ClaimRequestReader.MAX_CLAIMS)
                    .filter(one -> one != null && one.getResourceClaimName() != null).forEach(one -> names.add(one.getResourceClaimName()));
        }
        for (var name : names) {
            var claim = claim(namespace, name);
            if (claim != null) {
                nodes.addAll(ClaimHoldings.nodesOf(claim, this::nodeOfPool));
            }
        }
        return nodes;
    }

    @Override
    public ResourceClaim claim(String namespace, String name) {
        var informer = claims;
        return informer == null ? null : informer.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name));
    }

    @Override
    public DeviceClass deviceClass(String name) {
        var informer = classes;
        return informer == null ? null : informer.getStore().getByKey(name);
    }

    @Override
    public DeviceClass extendedResourceClass(String resourceName) {
        var informer = classes;
        if (informer == null) {
            return null;
        }
        var serving = informer.getIndexer().byIndex(BY_EXTENDED_RESOURCE, resourceName);
        return serving.isEmpty() ? null : serving.getFirst();
    }

    private String nodeOfPool(List<String> driverAndPool) {
        var informer = slices;
        if (informer == null) {
            return null;
        }
        var publishing = informer.getIndexer().byIndex(BY_POOL, poolKey(driverAndPool.get(0), driverAndPool.get(1)));
        return publishing.isEmpty() ? null : publishing.getFirst().getSpec().getNodeName();
    }

    private static String poolKey(String driver, String pool) {
        return driver + "\n" + pool;
    }

    /** Reads again the GPUs of the nodes a slice named before and after, and tells the listener of those that changed. */
    private void reread(ResourceSlice before, ResourceSlice after) {
        var nodes = new LinkedHashSet<String>();
        for (var slice : new ResourceSlice[] {before, after}) {
            if (slice != null && slice.getSpec() != null && slice.getSpec().getNodeName() != null) {
                nodes.add(slice.getSpec().getNodeName());
            }
        }
        for (var node : nodes) {
            var read = SliceReader.read(node, slices.getIndexer().byIndex(BY_NODE, node), catalog);
            var previous = slicesByNode.get(node);
            if (read.equals(previous == null ? NodeSlices.NONE : previous)) {
                continue;
            }
            if (read.equals(NodeSlices.NONE)) {
                slicesByNode.remove(node);
            } else {
                slicesByNode.put(node, read);
            }
            listener.slicesChanged(node);
        }
    }

    private void changed(ResourceClaim before, ResourceClaim after) {
        var nodes = new LinkedHashSet<String>();
        if (before != null) {
            nodes.addAll(ClaimHoldings.nodesOf(before, this::nodeOfPool));
        }
        if (after != null) {
            nodes.addAll(ClaimHoldings.nodesOf(after, this::nodeOfPool));
        }
        if (!nodes.isEmpty()) {
            listener.claimsChanged(nodes);
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        discovery.shutdownNow();
        for (var informer : new SharedIndexInformer<?>[] {slices, claims, classes}) {
            if (informer != null) {
                informer.close();
            }
        }
        listed.complete(null);
    }
}
