package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.trust.RecordTrust;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster as fabric8 informers see it: nodes, pods, PVs and PVCs, watched read-only, and where the cluster serves
 * DRA ({@code resource.k8s.io/v1}) its ResourceSlices, ResourceClaims and DeviceClasses ({@link DraInformers}): a node's
 * facts carry the GPUs its slices publish, and its bound pods the devices their allocated claims hold. Everything
 * here is rebuilt from the API server on start, so replicas need nothing from each other.
 *
 * <p>GPU-holding pods are kept per node as {@link BoundPod}s, updated as pod events arrive, so a
 * request for 5,000 nodes does not re-read every pod on every node.
 *
 * <p>An API server that is down or refusing (403 while RBAC is not yet in effect) is waited out. What fabric8 (7.8) does by
 * itself: each list request is retried by its HTTP client on connection errors and on 429 and 5xx answers (10 times, 100 ms
 * doubling to 3.2 s); an informer whose <em>first</em> list fails stops for good (its default {@link ExceptionHandler} retries
 * only once started, and never after a watch closed by a {@code WatcherException}), logging "will stop" with a stack trace;
 * once started it lists and watches again after {@code watchReconnectInterval} x 2^min(attempt, 5) from the client's Config
 * (1 s doubling to 32 s), reset by a list that succeeds, with no jitter. Added here: a handler that retries every failure,
 * first list included, for ever, and says each in one line (fabric8's own warning, with its stack trace, is silenced in
 * {@code simplelogger.properties}); and, where the interval is fabric8's default, a base drawn between 0.5 and 1 s, so
 * that replicas which lost the API server together do not come back in step (capped at 32 times the base).
 */
public final class InformerClusterView implements ClusterView, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InformerClusterView.class);
    private static final String BY_JOB = "job";
    private static final String BY_UID = "uid";
    /** fabric8's default {@code watchReconnectInterval}: the only one this view replaces by a jittered one. */
    private static final int FABRIC8_RECONNECT_INTERVAL_MS = 1000;
    /** What fabric8 does by default: retry once started, except after a watch closed by an exception. For tests of a stopped informer. */
    static final ExceptionHandler FABRIC8_DEFAULT = (started, failure) -> started
            && !(failure instanceof io.fabric8.kubernetes.client.WatcherException);
    /** Every failure retried, the first list's included: an API server that comes back finds the extender waiting. */
    static final ExceptionHandler FOR_EVER = (started, failure) -> true;

    private final PodRequestParser parser;
    private final WaitingPods waiting;
    private final RecordTrust trust;
    private final String rackLabel;
    private final SharedIndexInformer<Node> nodes;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<PersistentVolume> volumes;
    private final SharedIndexInformer<PersistentVolumeClaim> claims;
    private final DisruptionBudgetWatch budgets;
    /** ResourceSlices, ResourceClaims and DeviceClasses, followed where the cluster serves them. */
    private final DraInformers dra;
    /** The four informers, named, with what each last failed on. */
    private final List<Followed> followed;
    private volatile boolean started;
    private volatile boolean closed;
    /**
     * Every node's facts and bound GPU pods, replaced as informer events arrive (under {@code this}), so
     * that requests read one consistent, immutable table without locks. The facts of a node stay the
     * same object until the node changes, which the node states key on.
     */
    private volatile NodeSnapshot snapshot = NodeSnapshot.EMPTY;
    /** The node and pod handlers' progress through their informers' first lists (PVs and PVCs are read from the stores). */
    private final HandledKeys nodesHandled = new HandledKeys();
    private final HandledKeys podsHandled = new HandledKeys();
    /** node name -> pod UID -> what the pod holds there; pods may arrive before their node does. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, BoundPod>> gpuPods = new ConcurrentHashMap<>();

    private final Clock clock = Clock.systemUTC();
    /** Complete once records are judged by the replicas' key: at once when the trust has one, else at {@link #useRecordKey}. */
    private final CompletableFuture<Void> recordsJudged = new CompletableFuture<>();

    /** With {@code trust} deciding which pods' {@code hetgpu.io/gpu-devices} records count. */
    public InformerClusterView(KubernetesClient client, PodRequestParser parser, String rackLabel, RecordTrust trust) {
        this(client, parser, rackLabel, trust, FOR_EVER);
    }

    /** With {@code retry} deciding, after each failure is logged, whether an informer tries again ({@link #FOR_EVER} in the extender). */
    InformerClusterView(KubernetesClient client, PodRequestParser parser, String rackLabel, RecordTrust trust, ExceptionHandler retry) {
        this.parser = parser;
        this.waiting = new WaitingPods(parser);
        this.trust = trust;
        if (trust.hasKey()) {
            recordsJudged.complete(null);
        }
        this.rackLabel = rackLabel;
        var config = client.getConfiguration();
        if (config.getWatchReconnectInterval() != null && config.getWatchReconnectInterval() == FABRIC8_RECONNECT_INTERVAL_MS) {
            // Read by each informer as it is created, below. An interval someone chose (kubernetes.watch.reconnectInterval) is kept.
            config.setWatchReconnectInterval(ThreadLocalRandom.current().nextInt(FABRIC8_RECONNECT_INTERVAL_MS / 2, FABRIC8_RECONNECT_INTERVAL_MS));
        }
        this.nodes = client.nodes().runnableInformer(0);
        this.pods = client.pods().inAnyNamespace().runnableInformer(0);
        this.volumes = client.persistentVolumes().runnableInformer(0);
        this.claims = client.persistentVolumeClaims().inAnyNamespace().runnableInformer(0);
        this.followed = List.of(new Followed("nodes", nodes), new Followed("pods", pods),
                new Followed("persistent volumes", volumes), new Followed("persistent volume claims", claims));
        followed.forEach(one -> one.informer().exceptionHandler(one.handler(retry)));
        this.budgets = new DisruptionBudgetWatch(client);
        this.dra = new DraInformers(client, parser.catalog(), retry);
        dra.listener(new DraInformers.Listener() {
            @Override
            public void slicesChanged(String node) {
                republishSlices(node);
            }

            @Override
            public void claimsChanged(Set<String> nodes) {
                claimsOn(nodes);
            }
        });
        pods.addIndexers(Map.of(
                // The same reader and key as the pod's own request (PodRequest.job), so a pod finds the peers its job names.
                BY_JOB, pod -> JobMembershipReader.keyOf(pod).map(List::of).orElse(List.of()),
                BY_UID, pod -> pod.getMetadata().getUid() == null ? List.of() : List.of(pod.getMetadata().getUid())));
        nodes.addEventHandler(nodesHandled.<Node>handling((before, after) -> {
            if (after != null) {
                put(after);
            } else {
                remove(before.getMetadata().getName());
            }
        }));
        pods.addEventHandler(podsHandled.<Pod>handling((before, after) -> {
            if (after != null) {
                track(before, after);
            } else {
                untrack(before);
            }
        }));
    }

    /**
     * Starts watching; /readyz turns true once every informer has listed. The future completes then, however long the API
     * server takes to answer; it fails only when an informer stops (closed, or given up by a handler other than the extender's).
     */
    public CompletableFuture<Void> start() {
        started = true;
        budgets.start();
        List<CompletableFuture<Void>> lists = new java.util.ArrayList<>(followed.stream().map(Followed::start).toList());
        lists.add(dra.start());
        // Failed as soon as one informer stops: DRA's discovery may still be waiting for an API server that refuses.
        var allListed = new CompletableFuture<Void>();
        CompletableFuture.allOf(lists.toArray(CompletableFuture[]::new)).whenComplete((done, failure) -> {
            if (failure == null) {
                allListed.complete(null);
            }
        });
        for (var list : lists) {
            list.whenComplete((done, failure) -> {
                if (failure != null) {
                    allListed.completeExceptionally(failure);
                }
            });
        }
        return allListed.thenCompose(listed -> whenHandlersCaughtUp()).thenCompose(caughtUp -> recordsJudged)
                .whenComplete((done, failure) -> {
            if (failure == null) {
                LOG.info("caches synced: nodes, pods, persistent volumes and claims listed from the API server");
            }
        });
    }

    /** Completes once the handlers have seen the first lists (a few milliseconds after them), or at close. */
    private CompletableFuture<Void> whenHandlersCaughtUp() {
        if (closed || handlersCaughtUp()) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(10, java.util.concurrent.TimeUnit.MILLISECONDS))
                .thenCompose(waited -> whenHandlersCaughtUp());
    }

    @Override
    public boolean synced() {
        return nodes.hasSynced() && pods.hasSynced() && volumes.hasSynced() && claims.hasSynced() && handlersCaughtUp()
                && recordsJudged.isDone() && dra.synced();
    }

    @Override
    public Optional<String> unsynced() {
        var stopped = stopped();
        if (stopped.isPresent()) {
            return stopped;
        }
        var waiting = followed.stream().filter(one -> !one.informer().hasSynced()).toList();
        if (waiting.isEmpty()) {
            if (!handlersCaughtUp()) {
                return Optional.of(WAITING + ": nodes and pods listed, the view of them still being built");
            }
            if (!recordsJudged.isDone()) {
                return Optional.of(WAITING + ": the key that device records are signed with not yet read from its Secret");
            }
            return dra.unsynced().map(what -> WAITING + ": DRA: " + what);
        }
        var failures = waiting.stream().filter(one -> !one.lastFailure.isEmpty())
                .map(one -> one.kind() + ": " + one.lastFailure).toList();
        return Optional.of(WAITING + ": " + String.join(", ", waiting.stream().map(Followed::kind).toList())
                + " not yet listed from the API server" + (failures.isEmpty() ? "" : "; last failure " + String.join("; ", failures)));
    }

    /** Whether the node and pod handlers have seen all their informers hold: only then is the view complete. */
    private boolean handlersCaughtUp() {
        return nodesHandled.caughtUpWith(nodes.getStore().listKeys()) && podsHandled.caughtUpWith(pods.getStore().listKeys());
    }

    @Override
    public Optional<String> stopped() {
        if (!started || closed) {
            return Optional.empty();
        }
        return followed.stream().filter(one -> one.informer().stopped().toCompletableFuture().isDone()).findFirst().map(one -> "the " + one.kind()
                + " informer has stopped for good (" + one.stopCause() + "): the extender no longer follows the API server");
    }

    @Override
    public boolean knowsNodes() {
        return true;
    }

    @Override
    public NodeSnapshot nodes() {
        return snapshot;
    }

    @Override
    public NodeFacts node(String name) {
        var known = snapshot.facts(name);
        if (known != null) {
            return known;
        }
        // The informer lists before it tells its handlers: right after sync a node can be in the store
        // and not yet in the snapshot.
        var node = nodes.getStore().getByKey(name);
        return node == null ? null : NodeFacts.of(node, parser.resourceName()).withSlices(dra.slicesOf(name));
    }

    @Override
    public List<BoundPod> boundPods(String nodeName) {
        var snapshotted = snapshot;
        if (snapshotted.positionOf(nodeName) >= 0) {
            return snapshotted.boundPods(nodeName);
        }
        return holdings(nodeName);
    }

    /** The DRA objects pods' GPU requests are read from: empty where the cluster serves no {@code resource.k8s.io/v1}. */
    public io.hetgpu.extender.model.DraLookup dra() {
        return dra;
    }

    /** The node's GPU holdings: its device-plugin pods' and its allocated claims'. */
    private List<BoundPod> holdings(String nodeName) {
        var held = gpuPods.get(nodeName);
        return ClaimHoldings.merged(held == null ? List.of() : held.values(), dra.claimHoldings(nodeName, this::podByUid));
    }

    private synchronized void put(Node node) {
        var facts = NodeFacts.of(node, parser.resourceName()).withSlices(dra.slicesOf(node.getMetadata().getName()));
        var next = snapshot.withNode(facts);
        if (snapshot.positionOf(facts.name()) < 0) {
            // Pods and claims seen before their node: the new node starts with them.
            var held = holdings(facts.name());
            if (!held.isEmpty()) {
                next = next.withBoundPods(facts.name(), held);
            }
        }
        snapshot = next;
    }

    /** The node's ResourceSlices publish other GPUs: its facts carry them. */
    private synchronized void republishSlices(String nodeName) {
        var facts = snapshot.facts(nodeName);
        if (facts != null) {
            snapshot = snapshot.withNode(facts.withSlices(dra.slicesOf(nodeName)));
            // The pools the slices publish decide which claims allocated by pool alone are held here.
            republish(nodeName);
        }
    }

    /** Claims allocated on these nodes changed: their holdings are read again. */
    private synchronized void claimsOn(Set<String> nodeNames) {
        nodeNames.forEach(this::republish);
    }

    private synchronized void remove(String nodeName) {
        snapshot = snapshot.withoutNode(nodeName);
    }

    /** Called under {@code this} after the node's pods changed. */
    private void republish(String nodeName) {
        snapshot = snapshot.withBoundPods(nodeName, holdings(nodeName));
    }

    @Override
    public PlacementContext contextOf(PodRequest pod) {
        return PlacementContexts.of(pod, objects(), parser, rackLabel);
    }

    @Override
    public List<DataLocality> volumesOf(PodRequest pod) {
        return PlacementContexts.volumes(pod, objects(), rackLabel);
    }

    private PlacementContexts.Objects objects() {
        return new PlacementContexts.Objects(this::jobPods, nodes.getStore()::getByKey,
                (namespace, name) -> claims.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name)), volumes.getStore()::getByKey);
    }

    /**
     * Tells {@code listener} of each pod added, changed or deleted, as the informer sees it, on the informer's thread: the
     * listener must hand work off rather than block ({@link ThroughputLearning#seen}). Pods already listed are told at once.
     */
    public void onPods(java.util.function.Consumer<Pod> listener) {
        pods.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                listener.accept(pod);
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                listener.accept(after);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                listener.accept(pod);
            }
        });
    }

    /** Every pod the informer holds now. */
    public List<Pod> pods() {
        return pods.getStore().list();
    }

    @Override
    public List<Pod> jobPods(String jobKey) {
        return pods.getIndexer().byIndex(BY_JOB, jobKey);
    }

    @Override
    public Set<String> jobKeys() {
        var keys = new HashSet<String>();
        for (var pod : pods.getStore().list()) {
            JobMembershipReader.keyOf(pod).ifPresent(keys::add);
        }
        return keys;
    }

    @Override
    public int waitingGpusBelow(int gpus) {
        return waiting.gpusBelow(gpus);
    }

    @Override
    public Pod podByUid(String uid) {
        var found = pods.getIndexer().byIndex(BY_UID, uid);
        return found.isEmpty() ? null : found.getFirst();
    }

    private synchronized void track(Pod before, Pod pod) {
        waiting.seen(pod);
        trackDevicePlugin(before, pod);
        // A pod's claims' holdings carry its priority: read again where they are, once the pod is seen or changes.
        dra.nodesOfClaims(pod).forEach(this::republish);
    }

    private void trackDevicePlugin(Pod before, Pod pod) {
        // A bind in flight seen before (its record on the pod, not bound yet) leaves the node its record named once the pod
        // is bound, its record is gone or names another node.
        var wasBinding = before == null ? Optional.<String>empty() : BoundPods.recordedNodeUnbound(before);
        var placed = BoundPods.placed(pod, parser, trust);
        if (placed.isPresent()) {
            // Replaced in place, never released in between: a snapshot published between the two would show its GPUs free, and a
            // bind reading it would hand them out a second time. The same goes for a bind in flight to this node becoming a
            // bound pod: one entry, replaced. Another process's bind (or this one's) in flight holds its devices while its
            // record is fresh.
            var holding = placed.get();
            gpuPods.computeIfAbsent(holding.node(), name -> new ConcurrentHashMap<>()).put(holding.holding().uid(), holding.holding());
            republish(holding.node());
            wasBinding.filter(node -> !node.equals(holding.node())).ifPresent(node -> dropBinding(node, BoundPods.uidOf(pod)));
            return;
        }
        wasBinding.ifPresent(node -> dropBinding(node, BoundPods.uidOf(pod)));
        if (before != null) {
            untrackDevicePlugin(before);
        }
    }

    /**
     * Starts judging device records by the replicas' {@code key}, and judges again every pod seen so far (until now none of
     * their records counted). Each pod is read from the informer's store under the view's lock: the store holds a pod's
     * newest version before its handler runs, so an event that comes later replaces what is judged here, never the reverse.
     */
    public void useRecordKey(io.hetgpu.extender.trust.RecordKey key) {
        trust.use(key);
        synchronized (this) {
            for (var name : pods.getStore().listKeys()) {
                var pod = pods.getStore().getByKey(name);
                if (pod != null) {
                    track(null, pod);
                }
            }
        }
        recordsJudged.complete(null);
    }

    /** Removes a bind in flight that is no longer one (its pod bound, deleted, or its record gone): it never held GPUs. */
    private void dropBinding(String node, String uid) {
        var held = gpuPods.get(node);
        if (held != null && held.get(uid) != null && held.get(uid).binding()) {
            held.remove(uid);
            republish(node);
        }
    }

    private synchronized void untrack(Pod pod) {
        waiting.gone(pod);
        untrackDevicePlugin(pod);
        // Its claims hold their devices until their allocation is removed, no longer as an evictable pod's.
        dra.nodesOfClaims(pod).forEach(this::republish);
    }

    private void untrackDevicePlugin(Pod pod) {
        BoundPods.recordedNodeUnbound(pod).ifPresent(node -> dropBinding(node, BoundPods.uidOf(pod)));
        var nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (nodeName == null) {
            return;
        }
        var held = gpuPods.get(nodeName);
        var uid = BoundPods.uidOf(pod);
        var gone = held == null ? null : held.get(uid);
        if (gone != null && !gone.released() && !gone.binding()) {
            // Kept as released for a while: the device plugin's free list can still show its GPUs taken (BoundPod.releasedAt).
            var now = clock.instant();
            held.put(uid, gone.releasedAt(now));
            held.values().removeIf(other -> other.released() && other.releasedAt().isBefore(now.minus(BoundPod.RELEASE_MEMORY)));
            republish(nodeName);
        }
    }

    /**
     * One informer, named for the log and the probes, with its last failure. Its handler says each failure in one line (the
     * stack trace at debug level) and leaves the decision to retry to the policy given.
     */
    private static final class Followed {
        private final String kind;
        private final SharedIndexInformer<?> informer;
        private final AtomicInteger failures = new AtomicInteger();
        private volatile String lastFailure = "";

        Followed(String kind, SharedIndexInformer<?> informer) {
            this.kind = kind;
            this.informer = informer;
        }

        String kind() {
            return kind;
        }

        SharedIndexInformer<?> informer() {
            return informer;
        }

        ExceptionHandler handler(ExceptionHandler retry) {
            return (isStarted, failure) -> {
                lastFailure = ApiFaults.describe(failure);
                boolean again = retry.retryAfterException(isStarted, failure);
                failures.incrementAndGet();
                LOG.warn("{} {} from the API server failed, {}: {}", isStarted ? "following" : "listing", kind,
                        again ? "retrying with backoff" : "giving up", lastFailure);
                LOG.debug("{}: the failure in full", kind, failure);
                return again;
            };
        }

        CompletableFuture<Void> start() {
            return informer.start().toCompletableFuture().whenComplete((done, failure) -> {
                if (failure == null && failures.get() > 0) {
                    LOG.info("listed {} from the API server after {} failed attempts", kind, failures.getAndSet(0));
                }
            });
        }

        String stopCause() {
            try {
                informer.stopped().toCompletableFuture().getNow(null);
                return "stopped";
            } catch (RuntimeException e) {
                return ApiFaults.describe(e);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        nodes.close();
        pods.close();
        volumes.close();
        claims.close();
        budgets.close();
        dra.close();
    }

    @Override
    public DisruptionBudgets budgets() {
        return budgets.current();
    }
}
