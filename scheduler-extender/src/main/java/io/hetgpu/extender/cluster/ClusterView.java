package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/** What the extender knows about the cluster beyond a request. Read-only. */
public interface ClusterView {

    /** How every answer given before the caches have listed begins: kube-scheduler shows it in the pod's events. */
    String WAITING = "the extender is waiting for its caches";

    /** False until the informers have listed everything once. */
    boolean synced();

    /**
     * Why the view cannot answer for the cluster now (an informer has not listed yet, or has stopped), or empty when it
     * can. The verbs refuse with this text and {@code /readyz} answers it with a 503.
     */
    default Optional<String> unsynced() {
        return synced() ? Optional.empty() : Optional.of(WAITING + " (nodes, pods, persistent volumes and claims) to list from the API server");
    }

    /**
     * Why the view will never catch up again without a restart (an informer has stopped for good), or empty; {@code /healthz}
     * answers this with a 503 so that the kubelet restarts the extender. An API server that is down or refusing is not this:
     * the informers retry it for ever, and a restart would not bring it back.
     */
    default Optional<String> stopped() {
        return Optional.empty();
    }

    /** Whether nodes can be looked up by name (false without an API server: NodeNames requests then fail). */
    boolean knowsNodes();

    /** Every node the view knows, with the GPU pods bound to each, as of now. */
    NodeSnapshot nodes();

    /** The node's facts, or null when the view has not seen it. */
    default NodeFacts node(String name) {
        return nodes().facts(name);
    }

    /** Pods bound to the node that hold or were promised GPUs. */
    default List<BoundPod> boundPods(String nodeName) {
        return nodes().boundPods(nodeName);
    }

    /** Where the pod's job peers run and where its volumes' data lives. */
    PlacementContext contextOf(PodRequest pod);

    /** Where the pod's volumes' data lives, without looking at its job: what a plan reads for each member. */
    default List<DataLocality> volumesOf(PodRequest pod) {
        return contextOf(pod).volumes();
    }

    /**
     * Every pod of the job of this key ({@code JobMembership.key()}), bound or not, finished or not, in no set order;
     * empty without an API server.
     */
    default List<Pod> jobPods(String jobKey) {
        return List.of();
    }

    /** The key of every job some pod the view holds belongs to; empty without an API server. */
    default Set<String> jobKeys() {
        return Set.of();
    }

    /**
     * The GPUs that the pods in no job waiting for a node, each needing fewer than {@code gpus}, need together (0: none
     * waits, or the view cannot tell): while such smaller work waits for as much as the job headroom keeps, a pod of
     * several GPUs below high priority waits for that room.
     */
    default int waitingGpusBelow(int gpus) {
        return 0;
    }

    /** A pod by UID, or null; preemption names victims this way. */
    Pod podByUid(String uid);

    /**
     * The PodDisruptionBudgets preemption weighs, as of now: {@link DisruptionBudgets#UNKNOWN} until they have been read,
     * {@link DisruptionBudgets#NONE} without an API server.
     */
    default DisruptionBudgets budgets() {
        return DisruptionBudgets.NONE;
    }

    /**
     * The UIDs of the pods among {@code bound} (one node's) that preemption for a pod of {@code priority} could evict
     * without breaking a PodDisruptionBudget, as of now ({@link DisruptionBudgets#evictableBelow}).
     */
    default Set<String> evictableBelow(List<BoundPod> bound, int priority) {
        return budgets().evictableBelow(bound, priority, this::budgetLabelsOf);
    }

    /** What a budget reads of the pod of this UID, or null when the view does not hold it. */
    default DisruptionBudgets.PodLabels budgetLabelsOf(String uid) {
        var pod = podByUid(uid);
        if (pod == null || pod.getMetadata() == null) {
            return null;
        }
        var meta = pod.getMetadata();
        return new DisruptionBudgets.PodLabels(Objects.requireNonNullElse(meta.getNamespace(), ""),
                Objects.requireNonNullElse(meta.getName(), ""), Objects.requireNonNullElse(meta.getLabels(), Map.of()));
    }

    /** The view of an extender with no API server: it knows only what each request carries. */
    ClusterView REQUEST_ONLY = new ClusterView() {
        @Override
        public boolean synced() {
            return true;
        }

        @Override
        public boolean knowsNodes() {
            return false;
        }

        @Override
        public NodeSnapshot nodes() {
            return NodeSnapshot.EMPTY;
        }

        @Override
        public PlacementContext contextOf(PodRequest pod) {
            return PlacementContext.EMPTY;
        }

        @Override
        public Pod podByUid(String uid) {
            return null;
        }
    };
}
