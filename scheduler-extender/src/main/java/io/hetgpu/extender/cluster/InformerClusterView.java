package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.model.WaitingPeer;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster as fabric8 informers see it: nodes, pods, PVs and PVCs, watched read-only. Everything
 * here is rebuilt from the API server on start, so replicas need nothing from each other.
 *
 * <p>GPU-holding pods are kept per node as {@link BoundPod}s, updated as pod events arrive, so a
 * request for 5,000 nodes does not re-read every pod on every node.
 */
public final class InformerClusterView implements ClusterView, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InformerClusterView.class);
    private static final String BY_JOB = "job";
    /** kube-scheduler's queue order among pods of one priority: the earlier created first, then by name. */
    private static final Comparator<Pod> WAITING_ORDER = Comparator
            .comparing((Pod pod) -> pod.getMetadata().getCreationTimestamp() == null ? "" : pod.getMetadata().getCreationTimestamp())
            .thenComparing(pod -> pod.getMetadata().getName());
    private static final String BY_UID = "uid";

    private final PodRequestParser parser;
    private final String rackLabel;
    private final SharedIndexInformer<Node> nodes;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<PersistentVolume> volumes;
    private final SharedIndexInformer<PersistentVolumeClaim> claims;
    /**
     * Every node's facts and bound GPU pods, replaced as informer events arrive (under {@code this}), so
     * that requests read one consistent, immutable table without locks. The facts of a node stay the
     * same object until the node changes, which the node states key on.
     */
    private volatile NodeSnapshot snapshot = NodeSnapshot.EMPTY;
    /** node name -> pod UID -> what the pod holds there; pods may arrive before their node does. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, BoundPod>> gpuPods = new ConcurrentHashMap<>();

    private final Clock clock = Clock.systemUTC();

    public InformerClusterView(KubernetesClient client, PodRequestParser parser, String rackLabel) {
        this.parser = parser;
        this.rackLabel = rackLabel;
        this.nodes = client.nodes().runnableInformer(0);
        this.pods = client.pods().inAnyNamespace().runnableInformer(0);
        this.volumes = client.persistentVolumes().runnableInformer(0);
        this.claims = client.persistentVolumeClaims().inAnyNamespace().runnableInformer(0);
        pods.addIndexers(Map.of(
                BY_JOB, pod -> {
                    var job = jobOf(pod);
                    return job.isEmpty() ? List.of() : List.of(pod.getMetadata().getNamespace() + "/" + job);
                },
                BY_UID, pod -> pod.getMetadata().getUid() == null ? List.of() : List.of(pod.getMetadata().getUid())));
        nodes.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node node) {
                put(node);
            }

            @Override
            public void onUpdate(Node before, Node after) {
                put(after);
            }

            @Override
            public void onDelete(Node node, boolean finalStateUnknown) {
                remove(node.getMetadata().getName());
            }
        });
        pods.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                track(null, pod);
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                track(before, after);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                untrack(pod);
            }
        });
    }

    /** Starts watching; /readyz turns true once every informer has listed. */
    public CompletableFuture<Void> start() {
        return CompletableFuture.allOf(
                nodes.start().toCompletableFuture(), pods.start().toCompletableFuture(),
                volumes.start().toCompletableFuture(), claims.start().toCompletableFuture());
    }

    @Override
    public boolean synced() {
        return nodes.hasSynced() && pods.hasSynced() && volumes.hasSynced() && claims.hasSynced();
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
        return node == null ? null : NodeFacts.of(node, parser.resourceName());
    }

    @Override
    public List<BoundPod> boundPods(String nodeName) {
        var snapshotted = snapshot;
        if (snapshotted.positionOf(nodeName) >= 0) {
            return snapshotted.boundPods(nodeName);
        }
        var held = gpuPods.get(nodeName);
        return held == null ? List.of() : List.copyOf(held.values());
    }

    private synchronized void put(Node node) {
        var facts = NodeFacts.of(node, parser.resourceName());
        var next = snapshot.withNode(facts);
        var held = gpuPods.get(facts.name());
        if (snapshot.positionOf(facts.name()) < 0 && held != null && !held.isEmpty()) {
            // Pods seen before their node: the new node starts with them.
            next = next.withBoundPods(facts.name(), List.copyOf(held.values()));
        }
        snapshot = next;
    }

    private synchronized void remove(String nodeName) {
        snapshot = snapshot.withoutNode(nodeName);
    }

    /** Called under {@code this} after the node's pods changed. */
    private void republish(String nodeName) {
        var held = gpuPods.get(nodeName);
        snapshot = snapshot.withBoundPods(nodeName, held == null ? List.of() : List.copyOf(held.values()));
    }

    @Override
    public PlacementContext contextOf(PodRequest pod) {
        var peers = new ArrayList<PeerLocation>();
        var waiting = new ArrayList<WaitingPeer>();
        if (!pod.job().isEmpty()) {
            var job = pods.getIndexer().byIndex(BY_JOB, pod.namespace() + "/" + pod.job()).stream()
                    .filter(peer -> !peer.getMetadata().getName().equals(pod.name()))
                    .sorted(WAITING_ORDER).toList();
            for (var peer : job) {
                var nodeName = peer.getSpec() == null ? null : peer.getSpec().getNodeName();
                if ((nodeName == null || nodeName.isEmpty()) && BoundPods.waitsForNode(peer)) {
                    waiting.add(new WaitingPeer(peer.getMetadata().getName(), gpuCount(peer)));
                    continue;
                }
                if (!BoundPods.holdsResources(peer)) {
                    continue;
                }
                var node = nodes.getStore().getByKey(nodeName);
                var labels = node == null || node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
                peers.add(new PeerLocation(peer.getMetadata().getName(), nodeName, labels.getOrDefault(rackLabel, ""),
                        labels.getOrDefault(HetgpuKeys.LABEL_ZONE, "")));
            }
        }
        var located = new ArrayList<DataLocality>();
        for (var claimName : pod.claimNames()) {
            var claim = claims.getStore().getByKey(Cache.namespaceKeyFunc(pod.namespace(), claimName));
            var volumeName = claim == null || claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
            var volume = volumeName == null || volumeName.isEmpty() ? null : volumes.getStore().getByKey(volumeName);
            try {
                var locality = VolumeLocality.of(claim, volume, rackLabel);
                if (!locality.isEmpty()) {
                    located.add(locality);
                }
            } catch (IllegalArgumentException e) {
                // An admin's annotation, not the pod's: placing the pod without data locality beats refusing it.
                LOG.warn("ignoring the data locality of claim {}/{}: {}", pod.namespace(), claimName, e.getMessage());
            }
        }
        return new PlacementContext(peers, located, waiting);
    }

    /** GPUs a pod asks for; 0 when its request cannot be read (it will be refused on its own turn, saying why). */
    private int gpuCount(Pod pod) {
        try {
            return parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            return 0;
        }
    }

    @Override
    public Pod podByUid(String uid) {
        var found = pods.getIndexer().byIndex(BY_UID, uid);
        return found.isEmpty() ? null : found.getFirst();
    }

    private synchronized void track(Pod before, Pod pod) {
        // A bind in flight seen before (its record on the pod, not bound yet) leaves the node its record named once the pod
        // is bound, its record is gone or names another node.
        var wasBinding = before == null ? java.util.Optional.<BoundPods.Placed>empty() : BoundPods.recordedUnbound(before);
        if (BoundPods.holdsResources(pod)) {
            var bound = BoundPods.of(pod, parser);
            if (bound.gpuCount() > 0) {
                // Replaced in place, never released in between: a snapshot published between the two would show its
                // GPUs free, and a bind reading it would hand them out a second time. The same goes for a bind in flight
                // to this node becoming a bound pod: one entry, replaced.
                var nodeName = pod.getSpec().getNodeName();
                gpuPods.computeIfAbsent(nodeName, name -> new ConcurrentHashMap<>()).put(bound.uid(), bound);
                republish(nodeName);
                wasBinding.filter(was -> !was.node().equals(nodeName)).ifPresent(this::dropBinding);
                return;
            }
        }
        var binding = BoundPods.binding(pod);
        if (binding.isPresent()) {
            // Another process's bind (or this one's) in flight: its devices are taken while its record is fresh.
            var placed = binding.get();
            gpuPods.computeIfAbsent(placed.node(), name -> new ConcurrentHashMap<>()).put(placed.holding().uid(), placed.holding());
            republish(placed.node());
            wasBinding.filter(was -> !was.node().equals(placed.node())).ifPresent(this::dropBinding);
            return;
        }
        wasBinding.ifPresent(this::dropBinding);
        if (before != null) {
            untrack(before);
        }
    }

    /** Removes a bind in flight that is no longer one (its pod bound, deleted, or its record gone): it never held GPUs. */
    private void dropBinding(BoundPods.Placed placed) {
        var held = gpuPods.get(placed.node());
        var uid = placed.holding().uid();
        if (held != null && held.get(uid) != null && held.get(uid).binding()) {
            held.remove(uid);
            republish(placed.node());
        }
    }

    private synchronized void untrack(Pod pod) {
        BoundPods.recordedUnbound(pod).ifPresent(this::dropBinding);
        var nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (nodeName == null) {
            return;
        }
        var held = gpuPods.get(nodeName);
        var uid = pod.getMetadata().getUid() == null ? pod.getMetadata().getName() : pod.getMetadata().getUid();
        var gone = held == null ? null : held.get(uid);
        if (gone != null && !gone.released() && !gone.binding()) {
            // Kept as released for a while: the device plugin's free list can still show its GPUs taken (BoundPod.releasedAt).
            var now = clock.instant();
            held.put(uid, gone.releasedAt(now));
            held.values().removeIf(other -> other.released() && other.releasedAt().isBefore(now.minus(BoundPod.RELEASE_MEMORY)));
            republish(nodeName);
        }
    }

    private static String jobOf(Pod pod) {
        var labels = pod.getMetadata().getLabels();
        if (labels == null) {
            return "";
        }
        var job = labels.get(HetgpuKeys.POD_JOB);
        if (job == null || job.isEmpty()) {
            job = labels.get(HetgpuKeys.KUBEFLOW_JOB);
        }
        return job == null ? "" : job;
    }

    @Override
    public void close() {
        nodes.close();
        pods.close();
        volumes.close();
        claims.close();
    }
}
