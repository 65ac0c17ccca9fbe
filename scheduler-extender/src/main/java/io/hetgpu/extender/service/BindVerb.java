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
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.ExtenderBindingResult;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>The record is signed ({@link RecordTrust#sign}) for the pod's UID with the key the replicas share: the cluster views
 * trust only records so signed, never one a pod's author wrote.
 *
 * <p>The record is written before the Binding, so that the device plugin finds it when kubelet admits the pod. Written
 * on the pod version read (a resourceVersion precondition), it cannot overwrite the record of a pod bound meanwhile.
 * When the Binding then fails the record is removed (only while it is still this bind's). If that removal fails too,
 * what is left cannot mislead: it names the node it was chosen for, and the plugin and the extender follow a record only
 * on a pod bound to that node; kube-scheduler's retry writes a new one before it binds.
 *
 * <p>Only kube-scheduler should reach the verbs (beside it in one pod, or holding a client certificate); even so the verb
 * acts only on what kube-scheduler itself would ask: a
 * pod of one of {@link Limits#schedulerNames} (a pod of the default scheduler, or of another team's, is not this
 * extender's to bind), whose UID is the request's {@code PodUID}, onto a node the cluster view holds; anything else is
 * an {@code Error} before anything is written.
 *
 * <p>A bind ends within kube-scheduler's {@code httpTimeout} or not at all: every API call waits at most what is left of
 * the bind's {@linkplain Limits#budget budget}, and no write starts once it is spent. kube-scheduler has given up on the
 * bind by then and retries the pod, so a bind that runs out of time answers {@code Error} and removes its record once the
 * call it left behind has ended (unless that call was the Binding and it landed: then the record is right). That bound is
 * what makes records safe to read as the reservations of binds in flight, in other processes too: a record on a pod not
 * bound yet holds its devices for {@code httpTimeout} and a margin ({@link NodeStateFactory#recordLifetime}), after which
 * the bind that wrote it has ended.
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
        /** The bind's budget ran out waiting on the API server: nothing bound by this answer, the record being removed. */
        TIMED_OUT("timed_out"),
        /**
         * Anything else: bad arguments, a pod of another scheduler, a pod request that cannot be read, an unknown node,
         * the API server refusing.
         */
        FAILED("failed");

        private final String tag;

        Outcome(String tag) {
            this.tag = tag;
        }

        public String tag() {
            return tag;
        }
    }

    /**
     * What the bind verb accepts and how long it may take.
     *
     * @param schedulerNames the {@code spec.schedulerName}s whose pods it binds (the config's {@code schedulerNames})
     * @param httpTimeout    kube-scheduler's extender {@code httpTimeout}: a bind answers within it
     */
    public record Limits(Set<String> schedulerNames, Duration httpTimeout) {

        /** The shipped configuration's: hetgpu's scheduler profile, kube-scheduler told to wait 5 s. */
        public static final Limits DEFAULTS = new Limits(Set.of("hetgpu-scheduler"), Duration.ofSeconds(5));

        /** Kept for writing the answer and its trip back: a tenth of the timeout, at least 250 ms (at most half). */
        private static final Duration LEAST_MARGIN = Duration.ofMillis(250);

        public Limits {
            schedulerNames = Set.copyOf(schedulerNames);
            if (schedulerNames.isEmpty()) {
                throw new IllegalArgumentException("schedulerNames is empty: the bind verb would bind no pod");
            }
            if (httpTimeout.isNegative() || httpTimeout.isZero()) {
                throw new IllegalArgumentException("httpTimeout must be positive, got " + httpTimeout);
            }
        }

        /** How long a bind's API calls may take, all of them together: the timeout less a margin for the answer. */
        public Duration budget() {
            var margin = httpTimeout.dividedBy(10);
            margin = margin.compareTo(LEAST_MARGIN) < 0 ? LEAST_MARGIN : margin;
            var half = httpTimeout.dividedBy(2);
            return httpTimeout.minus(margin.compareTo(half) > 0 ? half : margin);
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
    private final Limits limits;
    private final WholeJobs jobs;
    private final RecordTrust trust;
    /** Where API calls run, so that a bind stops waiting for one at its deadline (virtual threads: they mostly wait). */
    private final ExecutorService calls = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("bind-call-", 0).factory());
    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, Limits.DEFAULTS, new CacheGate(cluster));
    }

    /** With {@code gate} refusing binds until the caches have synced (shared with the other verbs). */
    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound, CacheGate gate) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, Limits.DEFAULTS, gate);
    }

    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound,
                    Limits limits) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, limits, new CacheGate(cluster));
    }

    /** With {@code limits} (the schedulers served, the caller's timeout) and {@code gate} (shared with the other verbs). */
    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound,
                    Limits limits, CacheGate gate) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, limits, gate, WholeJobs.off());
    }

    /** With {@code jobs}: a member of a planned job is bound only to its seat, with the seat's devices. */
    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound,
                    Limits limits, CacheGate gate, WholeJobs jobs) {
        this(cluster, parser, nodes, policy, closedTier, binder, clock, onBound, limits, gate, jobs,
                RecordTrust.ownKey(limits.schedulerNames()));
    }

    /** With {@code trust} signing each record, so that the cluster views that share its key trust it. */
    public BindVerb(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                    Function<PodRequest, ClosedTier> closedTier, PodBinder binder, Clock clock, Consumer<Report> onBound,
                    Limits limits, CacheGate gate, WholeJobs jobs, RecordTrust trust) {
        this.trust = trust;
        this.jobs = jobs;
        this.limits = limits;
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
        var deadline = BindDeadline.after(limits.budget(), calls);
        Ending ending;
        try {
            ending = attempt(args, deadline);
        } catch (BindDeadline.OutOfTime e) {
            ending = outOfTime(args, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("bind of {} failed", Quote.escaped(args), e);
            ending = new Ending(Outcome.FAILED, "hetgpu extender internal error: " + e);
        }
        onBound.accept(new Report(ending.outcome(), Duration.ofNanos(System.nanoTime() - started)));
        if (!ending.error().isEmpty()) {
            // The names are the caller's, unchecked: whoever reaches the port could put a line break in them.
            LOG.info("bind of {}/{} to {} refused ({}): {}", Quote.escaped(args.podNamespace()), Quote.escaped(args.podName()),
                    Quote.escaped(args.node()), ending.outcome().tag(), Quote.escaped(ending.error()));
        }
        return new ExtenderBindingResult(ending.error());
    }

    /** The reservations, for tests. */
    DeviceReservations reservations() {
        return reservations;
    }

    private Ending attempt(ExtenderBindingArgs args, BindDeadline deadline) throws BindDeadline.OutOfTime {
        var missing = missingField(args);
        if (!missing.isEmpty()) {
            return new Ending(Outcome.FAILED, "ExtenderBindingArgs." + missing + " is empty: nothing to bind");
        }
        var namespace = args.podNamespace();
        var name = args.podName();
        var node = args.node();
        if (!cluster.knowsNodes()) {
            return new Ending(Outcome.FAILED, PodBinder.NO_API_SERVER);
        }
        // Before anything is read or written: a bind names a node this cluster has, whatever the pod needs.
        if (cluster.node(node) == null) {
            return new Ending(Outcome.FAILED, "node " + node + " is not a node the extender's informers hold (no such node, or not "
                    + "seen yet): pod " + namespace + "/" + name + " not bound");
        }
        Pod pod;
        try {
            pod = deadline.call("reading pod " + namespace + "/" + name, () -> binder.pod(namespace, name));
        } catch (PodBinder.Refusal e) {
            return refused(e);
        }
        if (pod == null) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " not found: deleted before it could be bound");
        }
        var uid = pod.getMetadata().getUid();
        if (!args.podUid().equals(uid)) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " is now UID " + uid + ", not " + args.podUid()
                    + ": deleted and created again, or not the pod kube-scheduler asked about");
        }
        var schedulerName = schedulerName(pod);
        if (!limits.schedulerNames().contains(schedulerName)) {
            return new Ending(Outcome.FAILED, "pod " + namespace + "/" + name + " has spec.schedulerName \"" + schedulerName
                    + "\", not one of " + new TreeSet<>(limits.schedulerNames()) + " (schedulerNames): not this extender's to bind");
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
        var hold = jobs.holdOf(uid);
        if (hold != null && !hold.node().equals(node)) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " has its seat on node " + hold.node()
                    + " in its job's plan, not on " + node + ": not bound");
        }
        if (hold == null && jobs.inJob(pod)) {
            return new Ending(Outcome.CONFLICT, "pod " + namespace + "/" + name + " belongs to a job of several pods, and no plan "
                    + "holds a seat for it now (the plan ended, or this extender started after it was made): kube-scheduler "
                    + "retries it, and its job is planned again");
        }
        if (!request.needsGpus()) {
            return bindOnly(namespace, name, uid, node, deadline);
        }
        var version = pod.getMetadata().getResourceVersion();
        // Choice, record and Binding for one node in one piece: pods bound there are then recorded in the order they
        // are bound, which is the order kubelet admits them in and the order the device plugin matches them by. The lock
        // is held at most until the holder's deadline, which comes before this bind's (it started earlier).
        try {
            return reservations.exclusively(node, ledger -> {
                // The view is read under the lock: a bind that read it before an earlier bind dropped a reservation (its pod
                // shown bound) could otherwise see neither the pod nor the reservation, and give its GPUs out again.
                var facts = cluster.node(node);
                if (facts == null) {
                    return new Ending(Outcome.FAILED, "node " + node + " " + ExtenderService.UNKNOWN_NODE);
                }
                // The pod's own record from an earlier attempt (kube-scheduler retrying it) holds nothing against it.
                var bound = cluster.boundPods(node).stream().filter(other -> !other.uid().equals(uid)).toList();
                var state = nodes.state(facts, bound);
                try {
                    if (!(state.gpus().source() instanceof NodeGpuSource.HetgpuInventory)) {
                        // NVIDIA's device plugin serves the node (or nothing readable does): no plugin there reads a record.
                        return bindOnly(namespace, name, uid, node, deadline);
                    }
                    return switch (hold != null ? seat(request, hold, state, bound, ledger) : choose(request, uid, state, bound, ledger)) {
                        case Ending refusal -> refusal;
                        case Chosen chosen -> recordAndBind(namespace, name, uid, version, node, chosen.devices(), ledger, deadline);
                    };
                } catch (BindDeadline.OutOfTime e) {
                    throw new OutOfTimeInside(e);
                }
            });
        } catch (OutOfTimeInside e) {
            throw e.outOfTime;
        }
    }

    /** Carries an {@link BindDeadline.OutOfTime} out of the reservations' lock, whose function cannot throw it. */
    private static final class OutOfTimeInside extends RuntimeException {
        private final BindDeadline.OutOfTime outOfTime;

        OutOfTimeInside(BindDeadline.OutOfTime outOfTime) {
            super(outOfTime.getMessage(), null, false, false);
            this.outOfTime = outOfTime;
        }
    }

    /** Writes the record, then the Binding; a failure gives the devices back and removes the record. */
    private Ending recordAndBind(String namespace, String name, String uid, String version, String node, List<String> devices,
                                 DeviceReservations.Ledger ledger, BindDeadline deadline) throws BindDeadline.OutOfTime {
        var record = codec.encode(trust.sign(new DeviceAssignment(node, devices, clock.instant()), uid));
        try {
            deadline.write("recording the devices of pod " + namespace + "/" + name,
                    () -> binder.annotate(namespace, name, version, HetgpuKeys.POD_GPU_DEVICES, record));
        } catch (PodBinder.Refusal e) {
            ledger.release(uid);
            if (e.code() == 0) {
                // No answer: the patch may have been applied.
                removeRecord(namespace, name, record, deadline);
            }
            return refused(e);
        } catch (BindDeadline.OutOfTime e) {
            if (!e.started()) {
                // No record was sent: only the devices to give back.
                ledger.release(uid);
                throw e;
            }
            throw cleanUpAfter(e, namespace, name, uid, node, record);
        }
        try {
            deadline.write("binding pod " + namespace + "/" + name + " to " + node, () -> binder.bind(namespace, name, uid, node));
        } catch (PodBinder.Refusal e) {
            try {
                if (e.code() == 0 && boundThere(namespace, name, uid, node, deadline)) {
                    // The Binding was created; only its answer was lost.
                    return Ending.bound(Outcome.BOUND);
                }
            } catch (BindDeadline.OutOfTime late) {
                throw cleanUpAfter(late, namespace, name, uid, node, record);
            }
            ledger.release(uid);
            removeRecord(namespace, name, record, deadline);
            return refused(e);
        } catch (BindDeadline.OutOfTime e) {
            throw cleanUpAfter(e, namespace, name, uid, node, record);
        }
        return Ending.bound(Outcome.BOUND);
    }

    /**
     * A bind out of time after its record may have been written: once the call it left behind has ended, the record is
     * removed unless the pod is bound there (a late Binding that landed: then the record is what the device plugin needs),
     * and the devices are given back. In the background: kube-scheduler has its answer already.
     */
    private BindDeadline.OutOfTime cleanUpAfter(BindDeadline.OutOfTime late, String namespace, String name, String uid, String node, String record) {
        late.callEnded().thenRunAsync(() -> {
            if (!boundThereNow(namespace, name, uid, node, record)) {
                reservations.exclusively(node, ledger -> {
                    ledger.release(uid);
                    return null;
                });
            }
        }, calls);
        return late;
    }

    /**
     * After a bind ran out of time: whether its pod is bound to the node after all (a late Binding), else its record
     * removed. A few tries: the API server was slow, not necessarily gone. A record left behind misleads no one for long:
     * on a pod not bound it counts only while fresh.
     */
    private boolean boundThereNow(String namespace, String name, String uid, String node, String record) {
        for (int attempt = 1; attempt <= CLEANUP_ATTEMPTS; attempt++) {
            try {
                var pod = binder.pod(namespace, name);
                if (pod == null || !uid.equals(pod.getMetadata().getUid())) {
                    return false;
                }
                if (pod.getSpec() != null && node.equals(pod.getSpec().getNodeName())) {
                    LOG.info("pod {}/{}: the Binding to {} landed after its bind had answered; its record stays", namespace, name, node);
                    return true;
                }
                binder.removeAnnotation(namespace, name, HetgpuKeys.POD_GPU_DEVICES, record);
                return false;
            } catch (PodBinder.Refusal e) {
                if (e.code() >= 400 && e.code() < 500) {
                    // Gone, or the record is not this bind's (never written, or replaced): nothing of it to remove.
                    return false;
                }
                LOG.warn("pod {}/{}: removing the record of a bind that ran out of time, attempt {} of {}: {}", namespace, name,
                        attempt, CLEANUP_ATTEMPTS, e.getMessage());
            } catch (RuntimeException e) {
                LOG.warn("pod {}/{}: removing the record of a bind that ran out of time failed", namespace, name, e);
                return false;
            }
        }
        return false;
    }

    /** Tries after a bind ran out of time to remove its record: the API server was slow, not necessarily gone. */
    private static final int CLEANUP_ATTEMPTS = 3;

    private Ending outOfTime(ExtenderBindingArgs args, String what) {
        return new Ending(Outcome.TIMED_OUT, "bind of pod " + args.podNamespace() + "/" + args.podName() + " to " + args.node()
                + " ran out of time (" + limits.budget().toMillis() + " ms of kube-scheduler's " + limits.httpTimeout().toMillis()
                + " ms httpTimeout): " + what + "; not bound by this answer, and any device record it wrote is removed");
    }

    private static String schedulerName(Pod pod) {
        var name = pod.getSpec() == null ? null : pod.getSpec().getSchedulerName();
        // The API server defaults an empty schedulerName to the default scheduler's.
        return name == null || name.isEmpty() ? "default-scheduler" : name;
    }

    /** The devices chosen and reserved for the pod, or the Ending that says why there are none. */
    private Choice choose(PodRequest request, String uid, NodeState state, List<BoundPod> bound, DeviceReservations.Ledger ledger) {
        var shown = new HashSet<String>(bound.size() * 2);
        // A reservation ends when the view shows its pod bound; a record of a bind in flight is not that yet (and counts
        // only while fresh: the informer may take longer than that to show the Binding).
        bound.stream().filter(pod -> !pod.binding()).forEach(pod -> shown.add(pod.uid()));
        var free = new NodeState(state.name(), state.rack(), state.zone(), state.gpus(),
                state.freeMask() & ~ledger.held(shown) & ~jobs.holds().heldOn(state.name(), uid));
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

    /** The devices of the pod's seat in its job's plan, reserved, if nothing has taken them since the plan was made. */
    private Choice seat(PodRequest request, io.hetgpu.extender.job.JobHolds.Hold hold, NodeState state, List<BoundPod> bound, DeviceReservations.Ledger ledger) {
        var shown = new HashSet<String>(bound.size() * 2);
        bound.stream().filter(pod -> !pod.binding()).forEach(pod -> shown.add(pod.uid()));
        long free = state.freeMask() & ~ledger.held(shown) & ~jobs.holds().heldOn(state.name(), hold.podUid());
        if ((free & hold.mask()) != hold.mask()) {
            jobs.holds().releaseHolding(hold.podUid(), "the planned GPUs of pod " + request.displayName() + " on node " + state.name()
                    + " were taken before its bind");
            return new Ending(Outcome.NO_FIT, "node " + state.name() + " no longer has the GPUs planned for pod " + request.displayName()
                    + ": its job is planned again");
        }
        ledger.reserve(hold.podUid(), hold.mask());
        return new Chosen(hold.devices());
    }

    private Ending bindOnly(String namespace, String name, String uid, String node, BindDeadline deadline) throws BindDeadline.OutOfTime {
        try {
            deadline.write("binding pod " + namespace + "/" + name + " to " + node, () -> binder.bind(namespace, name, uid, node));
            return Ending.bound(Outcome.BOUND_UNRECORDED);
        } catch (PodBinder.Refusal e) {
            return e.code() == 0 && boundThere(namespace, name, uid, node, deadline) ? Ending.bound(Outcome.BOUND_UNRECORDED) : refused(e);
        }
    }

    private boolean boundThere(String namespace, String name, String uid, String node, BindDeadline deadline) throws BindDeadline.OutOfTime {
        try {
            var pod = deadline.call("checking whether pod " + namespace + "/" + name + " was bound", () -> binder.pod(namespace, name));
            return pod != null && uid.equals(pod.getMetadata().getUid()) && pod.getSpec() != null && node.equals(pod.getSpec().getNodeName());
        } catch (PodBinder.Refusal e) {
            return false;
        }
    }

    /**
     * Removes a failed bind's record, waiting for that at most until the deadline: past it the removal goes on alone (it
     * undoes, so it may end after the answer; a record left on a pod not bound counts only while fresh).
     */
    private void removeRecord(String namespace, String name, String record, BindDeadline deadline) {
        var removal = CompletableFuture.runAsync(() -> {
            try {
                binder.removeAnnotation(namespace, name, HetgpuKeys.POD_GPU_DEVICES, record);
            } catch (PodBinder.Refusal e) {
                if (e.code() != 404) {
                    // Harmless (see the class comment), but worth a line: the record outlives a bind that failed.
                    LOG.warn("could not remove {} from pod {}/{} after a failed bind: {}", HetgpuKeys.POD_GPU_DEVICES, namespace, name,
                            e.getMessage());
                }
            }
        }, calls);
        try {
            removal.get(Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.debug("pod {}/{}: the record's removal goes on after the answer", namespace, name);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            LOG.warn("could not remove {} from pod {}/{} after a failed bind", HetgpuKeys.POD_GPU_DEVICES, namespace, name, e.getCause());
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
        if (args.podUid() == null || args.podUid().isEmpty()) {
            // kube-scheduler always sends it: without it, the pod bound could be another one of that name.
            return "PodUID";
        }
        if (args.node() == null || args.node().isEmpty()) {
            return "Node";
        }
        return "";
    }
}
