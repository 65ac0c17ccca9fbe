package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.ExtenderBindingResult;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bind verb: kube-scheduler has chosen a node; the extender chooses the pod's GPUs there, records them on the pod
 * ({@code hetgpu.io/gpu-devices}) and binds it. No HTTP here.
 *
 * <p>The devices are the policy's, exactly as the filter judged the node: the same device filters (models, memory,
 * compute capability, workload speed share), the NVLink rule, the reserve's closed tier and the shared allocator, over
 * the node's free devices now, less those reserved by binds the cluster view does not show yet. Binds to one node run
 * one at a time, choice, record and Binding together: two binds never get one GPU, and the records' bind times are in
 * the order of the Bindings, the order the device plugin matches pods by. Binds to different nodes run in parallel; a
 * burst to one node costs two API writes per pod, one after the other.
 *
 * <p>The record is written before the Binding, so that the device plugin finds it when kubelet admits the pod. Written
 * on the pod version read (a resourceVersion precondition), it cannot overwrite the record of a pod bound meanwhile.
 * When the Binding then fails the record is removed (only while it is still this bind's). If that removal fails too,
 * what is left cannot mislead: it names the node it was chosen for, and the plugin and the extender follow a record only
 * on a pod bound to that node; kube-scheduler's retry writes a new one before it binds.
 *
 * <p>Any failure is an {@code Error} in the answer, which kube-scheduler takes as "retry this pod".
 */
public final class BindVerb {

    private static final Logger LOG = LoggerFactory.getLogger(BindVerb.class);
    /** How long a reservation outlives its bind if the view never shows the pod: far above any informer's lag. */
    static final Duration RESERVATION_LIFETIME = Duration.ofMinutes(2);

    /** How a bind ended, for metrics. */
    public enum Outcome {
        /** Bound with its devices recorded. */
        BOUND("bound"),
        /** Bound with no record: a pod without GPUs, or a node whose GPUs hetgpu's device plugin does not serve. */
        BOUND_UNRECORDED("bound_unrecorded"),
        /** The node can no longer give the pod suitable GPUs (taken meanwhile). */
        NO_FIT("no_fit"),
        /** The pod was deleted, recreated, or bound by someone else (404, 409). */
        CONFLICT("conflict"),
        /** Anything else: bad arguments, a pod request that cannot be read, an unknown node, the API server unreachable. */
        FAILED("failed");

        private final String tag;

        Outcome(String tag) {
            this.tag = tag;
        }

        public String tag() {
            return tag;
        }
    }

    /** One bind as metrics and logs hear of it. */
    public record Report(Outcome outcome, Duration took) {
    }

    /** What a node's devices give the pod: the devices, or the end of the attempt. */
    private sealed interface Choice permits Chosen, Ending {
    }

    /** Device IDs in the order the container sees them, reserved for the pod. */
    private record Chosen(List<String> devices) implements Choice {
    }

    /** The end of one attempt: what kube-scheduler is told, and how it ended. */
    private record Ending(Outcome outcome, String error) implements Choice {
        static Ending bound(Outcome outcome) {
            return new Ending(outcome, "");
        }
    }

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    private final Function<PodRequest, ClosedTier> closedTier;
    private final PodBinder binder;
    private final Clock clock;
    private final Consumer<Report> onBound;
    private final CacheGate gate;
    private final DeviceReservations reservations;
    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, new CacheGate(cluster));
    }

    /** With {@code gate} refusing binds until the caches have synced (shared with the other verbs). */
    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound, CacheGate gate) {
        this.gate = gate;
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
        this.closedTier = closedTier;
        this.binder = binder;
        this.clock = clock;
        this.onBound = onBound;
        this.reservations = new DeviceReservations(clock, RESERVATION_LIFETIME);
    }

    public ExtenderBindingResult bind(ExtenderBindingArgs args) {
        // Before the caches: the GPUs of pods not yet listed would count as free. Nothing is read or written.
        var waiting = gate.refusal("bind");
        if (waiting.isPresent()) {
            return new ExtenderBindingResult(waiting.get());
        }
        long started = System.nanoTime();
        Ending ending;
        try {
            ending = attempt(args);
        } catch (RuntimeException e) {
            LOG.error("bind of {} failed", args, e);
            ending = new Ending(Outcome.FAILED, "hetgpu extender internal error: " + e);
        }
        onBound.accept(new Report(ending.outcome(), Duration.ofNanos(System.nanoTime() - started)));
        if (!ending.error().isEmpty()) {
            LOG.info("bind of {}/{} to {} refused ({}): {}", args.podNamespace(), args.podName(), args.node(), ending.outcome().tag(),
                    ending.error());
        }
        return new ExtenderBindingResult(ending.error());
    }

    /** The reservations, for tests. */
    DeviceReservations reservations() {
        return reservations;
    }

    private Ending attempt(ExtenderBindingArgs args) {
        var missing = missingField(args);
        if (!missing.isEmpty()) {
            return new Ending(Outcome.FAILED, "ExtenderBindingArgs." + missing + " is empty: nothing to bind");
        }
        var namespace = args.podNamespace();
        var name = args.podName();
        var node = args.node();
        Pod pod;
        try {
            pod = binder.pod(namespace, name);
        } catch (PodBinder.Refusal e) {
            return refused(e);
        }
        if (pod == null) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " not found: deleted before it could be bound");
        }
        var uid = pod.getMetadata().getUid();
        if (args.podUid() != null && !args.podUid().isEmpty() && !args.podUid().equals(uid)) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " is now UID " + uid + ", not " + args.podUid()
                    + ": deleted and created again");
        }
        var boundTo = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (boundTo != null && !boundTo.isEmpty()) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " is already bound to node " + boundTo);
        }
        PodRequest request;
        try {
            request = parser.parse(pod);
        } catch (InvalidPodRequestException e) {
            return new Ending(Outcome.FAILED, "pod " + namespace + "/" + name + " cannot be placed: " + e.getMessage());
        }
        if (!request.needsGpus()) {
            return bindOnly(namespace, name, uid, node);
        }
        var version = pod.getMetadata().getResourceVersion();
        // Choice, record and Binding for one node in one piece: pods bound there are then recorded in the order they
        // are bound, which is the order kubelet admits them in and the order the device plugin matches them by.
        return reservations.exclusively(node, ledger -> {
            // The view is read under the lock: a bind that read it before an earlier bind dropped a reservation (its pod
            // shown bound) could otherwise see neither the pod nor the reservation, and give its GPUs out again.
            var facts = cluster.node(node);
            if (facts == null) {
                return new Ending(Outcome.FAILED, "node " + node + " " + ExtenderService.UNKNOWN_NODE);
            }
            var bound = cluster.boundPods(node);
            var state = nodes.state(facts, bound);
            if (!(state.gpus().source() instanceof NodeGpuSource.HetgpuInventory)) {
                // NVIDIA's device plugin serves the node (or nothing readable does): no plugin there reads a record.
                return bindOnly(namespace, name, uid, node);
            }
            return switch (choose(request, uid, state, bound, ledger)) {
                case Ending refusal -> refusal;
                case Chosen chosen -> recordAndBind(namespace, name, uid, version, node, chosen.devices(), ledger);
            };
        });
    }

    /** Writes the record, then the Binding; a failure gives the devices back and removes the record. */
    private Ending recordAndBind(String namespace, String name, String uid, String version, String node, List<String> devices,
                                 DeviceReservations.Ledger ledger) {
        var record = codec.encode(new DeviceAssignment(node, devices, clock.instant()));
        try {
            binder.annotate(namespace, name, version, HetgpuKeys.POD_GPU_DEVICES, record);
        } catch (PodBinder.Refusal e) {
            ledger.release(uid);
            if (e.code() == 0) {
                // No answer: the patch may have been applied.
                removeRecord(namespace, name, record);
            }
            return refused(e);
        }
        try {
            binder.bind(namespace, name, uid, node);
        } catch (PodBinder.Refusal e) {
            if (e.code() == 0 && boundThere(namespace, name, uid, node)) {
                // The Binding was created; only its answer was lost.
                return Ending.bound(Outcome.BOUND);
            }
            ledger.release(uid);
            removeRecord(namespace, name, record);
            return refused(e);
        }
        return Ending.bound(Outcome.BOUND);
    }

    /** The devices chosen and reserved for the pod, or the Ending that says why there are none. */
    private Choice choose(PodRequest request, String uid, NodeState state, List<BoundPod> bound, DeviceReservations.Ledger ledger) {
        var shown = new HashSet<String>(bound.size() * 2);
        bound.forEach(pod -> shown.add(pod.uid()));
        var free = new NodeState(state.name(), state.rack(), state.zone(), state.gpus(), state.freeMask() & ~ledger.held(shown));
        return switch (policy.assess(request, free, closedTier.apply(request))) {
            case PlacementPolicy.Misfit misfit -> new Ending(Outcome.NO_FIT, "node " + state.name() + " can no longer take pod "
                    + request.displayName() + ": " + misfit.rejection().reason());
            case PlacementPolicy.Fit fit -> {
                var positions = fit.candidate().set().positions();
                long mask = 0;
                var devices = new ArrayList<String>(positions.size());
                for (int position : positions) {
                    mask |= 1L << position;
                    devices.add(state.gpus().topology().device(position).uuid());
                }
                ledger.reserve(uid, mask);
                yield new Chosen(devices);
            }
        };
    }

    private Ending bindOnly(String namespace, String name, String uid, String node) {
        try {
            binder.bind(namespace, name, uid, node);
            return Ending.bound(Outcome.BOUND_UNRECORDED);
        } catch (PodBinder.Refusal e) {
            return e.code() == 0 && boundThere(namespace, name, uid, node) ? Ending.bound(Outcome.BOUND_UNRECORDED) : refused(e);
        }
    }

    private boolean boundThere(String namespace, String name, String uid, String node) {
        try {
            var pod = binder.pod(namespace, name);
            return pod != null && uid.equals(pod.getMetadata().getUid()) && pod.getSpec() != null && node.equals(pod.getSpec().getNodeName());
        } catch (PodBinder.Refusal e) {
            return false;
        }
    }

    private void removeRecord(String namespace, String name, String record) {
        try {
            binder.removeAnnotation(namespace, name, HetgpuKeys.POD_GPU_DEVICES, record);
        } catch (PodBinder.Refusal e) {
            if (e.code() != 404) {
                // Harmless (see the class comment), but worth a line: the record outlives a bind that failed.
                LOG.warn("could not remove {} from pod {}/{} after a failed bind: {}", HetgpuKeys.POD_GPU_DEVICES, namespace, name,
                        e.getMessage());
            }
        }
    }

    private static Ending refused(PodBinder.Refusal e) {
        var outcome = e.code() == 404 || e.code() == 409 ? Outcome.CONFLICT : Outcome.FAILED;
        return new Ending(outcome, e.getMessage());
    }

    private static String missingField(ExtenderBindingArgs args) {
        if (args.podName() == null || args.podName().isEmpty()) {
            return "PodName";
        }
        if (args.podNamespace() == null || args.podNamespace().isEmpty()) {
            return "PodNamespace";
        }
        if (args.node() == null || args.node().isEmpty()) {
            return "Node";
        }
        return "";
    }
}
