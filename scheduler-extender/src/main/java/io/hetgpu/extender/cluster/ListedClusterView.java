package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.trust.RecordTrust;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The cluster as one list of each kind showed it (nodes, pods, PersistentVolumes and claims), followed no further: what a
 * tool sees that reads the cluster once, then plays decisions on its copy itself (a pod bound, a record written, a pod
 * evicted: {@link #put}, {@link #remove}). Each pod's GPU holding is kept by the one rule the informers keep it by
 * ({@link BoundPods#placed}) and contexts are read as theirs are ({@link PlacementContexts}), so the extender's verbs
 * answer over this copy as they would over informers that had listed the same objects.
 *
 * <p>Changes are made by one caller at a time (synchronized) and published whole, like the informers' snapshot.
 */
public final class ListedClusterView implements ClusterView {

    private final PodRequestParser parser;
    private final WaitingPods waiting;
    private final RecordTrust trust;
    private final String rackLabel;
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final Map<String, PersistentVolume> volumes = new HashMap<>();
    /** namespace/name -> claim */
    private final Map<String, PersistentVolumeClaim> claims = new HashMap<>();
    /** UID (or name, for a pod without one) -> pod, in the order listed and added */
    private final Map<String, Pod> pods = new LinkedHashMap<>();
    /** node name -> UID -> what the pod holds there */
    private final Map<String, Map<String, BoundPod>> holdings = new HashMap<>();
    /** ResourceSlices, ResourceClaims and DeviceClasses as listed ({@link ListedDra#NONE} when not), replaced by {@link #useDra}. */
    private volatile ListedDra dra;
    private volatile NodeSnapshot snapshot;
    private volatile DisruptionBudgets budgets = DisruptionBudgets.NONE;

    public ListedClusterView(List<Node> nodes, List<Pod> pods, List<PersistentVolume> volumes, List<PersistentVolumeClaim> claims,
                             PodRequestParser parser, String rackLabel, RecordTrust trust) {
        this(nodes, pods, volumes, claims, ListedDra.NONE, parser, rackLabel, trust);
    }

    /** With DRA's objects as listed: nodes' slices and claims' allocations read as the informers read them. */
    public ListedClusterView(List<Node> nodes, List<Pod> pods, List<PersistentVolume> volumes, List<PersistentVolumeClaim> claims,
                             ListedDra dra, PodRequestParser parser, String rackLabel, RecordTrust trust) {
        this.dra = dra;
        this.parser = parser;
        this.waiting = new WaitingPods(parser);
        this.trust = trust;
        this.rackLabel = rackLabel;
        nodes.forEach(node -> this.nodes.put(node.getMetadata().getName(), node));
        volumes.forEach(volume -> this.volumes.put(volume.getMetadata().getName(), volume));
        claims.forEach(claim -> this.claims.put(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName(), claim));
        pods.forEach(this::hold);
        snapshot = NodeSnapshot.of(this.nodes.values().stream().map(node -> NodeFacts.of(node, parser.resourceName())
                .withSlices(dra.slicesOf(node.getMetadata().getName()))).toList(), heldByNode());
    }

    /** The PodDisruptionBudgets listed with the cluster: what the eviction floor weighs as the extender's informer would. */
    public void useBudgets(List<PodDisruptionBudget> listed) {
        budgets = DisruptionBudgets.of(listed.stream().map(DisruptionBudgetWatch::budget).toList());
    }

    @Override
    public DisruptionBudgets budgets() {
        return budgets;
    }

    /** Adds the pod, or replaces the one of its UID (bound, annotated), and what it holds with it. */
    public synchronized void put(Pod pod) {
        var changed = new ArrayList<String>();
        release(pod, changed);
        BoundPods.placed(pod, parser, trust).ifPresent(placed -> changed.add(placed.node()));
        hold(pod);
        republish(changed);
    }

    /** The pod is gone (deleted, evicted): its GPUs are free at once, as a listing taken after its deletion would show. */
    public synchronized void remove(Pod pod) {
        var changed = new ArrayList<String>();
        release(pod, changed);
        pods.remove(BoundPods.uidOf(pod));
        waiting.gone(pod);
        republish(changed);
    }

    @Override
    public int waitingGpusBelow(int gpus) {
        return waiting.gpusBelow(gpus);
    }

    /** Every pod, in the order listed and added. */
    public synchronized List<Pod> pods() {
        return List.copyOf(pods.values());
    }

    /** The pod of that namespace and name, or null. */
    public synchronized Pod pod(String namespace, String name) {
        for (var pod : pods.values()) {
            if (namespace.equals(pod.getMetadata().getNamespace()) && name.equals(pod.getMetadata().getName())) {
                return pod;
            }
        }
        return null;
    }

    /** Every Node object, in the order listed. */
    public synchronized List<Node> nodeObjects() {
        return List.copyOf(nodes.values());
    }

    private void hold(Pod pod) {
        pods.put(BoundPods.uidOf(pod), pod);
        waiting.seen(pod);
        BoundPods.placed(pod, parser, trust).ifPresent(placed ->
                holdings.computeIfAbsent(placed.node(), name -> new LinkedHashMap<>()).put(placed.holding().uid(), placed.holding()));
    }

    /** Drops what the pod's former version held, noting the node it held on. */
    private void release(Pod pod, List<String> changed) {
        var former = pods.get(BoundPods.uidOf(pod));
        if (former == null) {
            return;
        }
        BoundPods.placed(former, parser, trust).ifPresent(placed -> {
            var held = holdings.get(placed.node());
            if (held != null) {
                held.remove(placed.holding().uid());
            }
            changed.add(placed.node());
        });
    }

    private void republish(List<String> changed) {
        var next = snapshot;
        for (var node : changed) {
            next = next.withBoundPods(node, holdingsOn(node));
        }
        snapshot = next;
    }

    private Map<String, List<BoundPod>> heldByNode() {
        var byNode = new HashMap<String, List<BoundPod>>();
        nodes.keySet().forEach(node -> byNode.put(node, holdingsOn(node)));
        holdings.keySet().forEach(node -> byNode.computeIfAbsent(node, this::holdingsOn));
        return byNode;
    }

    /** The node's holdings: its device-plugin pods' and its allocated claims'. */
    private List<BoundPod> holdingsOn(String node) {
        var held = holdings.get(node);
        return ClaimHoldings.merged(held == null ? List.of() : held.values(), dra.claimHoldings(node, pods::get));
    }

    /**
     * DRA's objects as they now are in the copy (a claim allocated, a pod added to its {@code reservedFor}), as a DRA
     * informer's event would bring them: every node's claim holdings read again. The slices must be those listed: a
     * node's GPUs are read once, at the listing.
     */
    public synchronized void useDra(ListedDra now) {
        dra = now;
        var next = snapshot;
        for (var node : nodes.keySet()) {
            next = next.withBoundPods(node, holdingsOn(node));
        }
        snapshot = next;
    }

    /** The DRA objects pods' requests are read from ({@link PodRequestParser#withDra}). */
    public ListedDra dra() {
        return dra;
    }

    @Override
    public boolean synced() {
        return true;
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
    public synchronized PlacementContext contextOf(PodRequest pod) {
        return PlacementContexts.of(pod, objects(), parser, rackLabel);
    }

    @Override
    public synchronized List<DataLocality> volumesOf(PodRequest pod) {
        return PlacementContexts.volumes(pod, objects(), rackLabel);
    }

    private PlacementContexts.Objects objects() {
        return new PlacementContexts.Objects(this::jobPods, nodes::get, (namespace, name) -> claims.get(namespace + "/" + name), volumes::get);
    }

    @Override
    public synchronized List<Pod> jobPods(String jobKey) {
        return pods.values().stream().filter(pod -> JobMembershipReader.keyOf(pod).filter(jobKey::equals).isPresent()).toList();
    }

    @Override
    public synchronized Set<String> jobKeys() {
        var keys = new HashSet<String>();
        pods.values().forEach(pod -> JobMembershipReader.keyOf(pod).ifPresent(keys::add));
        return keys;
    }

    @Override
    public synchronized Pod podByUid(String uid) {
        return pods.get(uid);
    }
}
