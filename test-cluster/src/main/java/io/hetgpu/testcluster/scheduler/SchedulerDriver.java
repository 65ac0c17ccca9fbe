package io.hetgpu.testcluster.scheduler;

import io.hetgpu.kubescheduler.selection.TieBreak;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The test cluster's kube-scheduler: takes the pending pods addressed to its scheduler name, highest
 * priority first, then in the order they reached the queue ({@link QueueOrder}), runs each through a {@link SchedulingCycle} against the
 * target's current nodes and pods, binds it or records a FailedScheduling event. One pod at a time, as
 * kube-scheduler does, so each decision sees the ones before it. The target is the test cluster's API server
 * ({@link ApiServerTarget}), or a copy of a cluster in memory where the question is only where pods would go.
 */
public final class SchedulerDriver {

    private final SchedulingTarget target;
    private final SchedulerSettings settings;
    private final TieBreak ties;
    private final SchedulingCycle cycle;
    /** The seed of kube-scheduler's ApiPreemption's walk, when this driver runs it; null when it does not. */
    private final Random preemptionOffsets;
    private final ApiPreemption preemption;
    /** kube-scheduler's {@code DRAPreemption} feature gate: whether the dry run releases the devices of victims' claims. */
    private final boolean releasingDraClaims;
    /** kube-scheduler's backoff queue, when this driver keeps one; null when every pending pod is tried each round. */
    private final PodBackoff backoff;
    private final List<? extends SchedulerExtender> extenders;

    public SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, long seed) {
        this(client, settings, http, TieBreak.random(new Random(seed)));
    }

    public SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, TieBreak ties) {
        this(new ApiServerTarget(client, settings.schedulerName()), settings,
                settings.extenders().stream().map(e -> new ExtenderClient(e, http)).toList(), ties);
    }

    /** A driver over any target, calling these extenders (the entries of {@code settings}, however they are reached). */
    public SchedulerDriver(SchedulingTarget target, SchedulerSettings settings, List<? extends SchedulerExtender> extenders, TieBreak ties) {
        this(target, settings, extenders, ties, null, null, false);
    }

    private SchedulerDriver(SchedulingTarget target, SchedulerSettings settings, List<? extends SchedulerExtender> extenders, TieBreak ties,
                            Random preemptionOffsets, PodBackoff backoff, boolean releasingDraClaims) {
        this.target = target;
        this.settings = settings;
        this.ties = ties;
        this.extenders = List.copyOf(extenders);
        this.cycle = new SchedulingCycle(this.extenders, ties);
        this.preemptionOffsets = preemptionOffsets;
        this.preemption = preemptionOffsets == null ? null : new ApiPreemption(this.extenders, preemptionOffsets, releasingDraClaims);
        this.backoff = backoff;
        this.releasingDraClaims = releasingDraClaims;
    }

    /**
     * The same scheduler running kube-scheduler's ApiPreemption for a pod no node takes, as every cluster that
     * sets PriorityClasses does (its PostFilter plugin is on by default). Off in the plain constructors until the
     * simulator preempts too: the placement-equality test holds the two to the same decisions.
     *
     * @param seed the seed of the random offset at which each preemption starts its walk over the nodes
     */
    public SchedulerDriver preempting(long seed, TieBreak ties) {
        return new SchedulerDriver(target, settings, extenders, ties, new Random(seed), backoff, releasingDraClaims);
    }

    /**
     * The same scheduler with kube-scheduler's {@code DRAPreemption} feature gate on (beta from 1.38): preemption's dry
     * run counts the devices of the claims its victims leave used by no one free ({@link ApiPreemption}). Off, as in
     * every release through 1.37, the DynamicResources plugin has no RemovePod: a victim's devices count held, and a
     * pod that lacks only devices of DRA evicts nothing.
     */
    public SchedulerDriver releasingDraClaims() {
        return new SchedulerDriver(target, settings, extenders, ties, preemptionOffsets, backoff, true);
    }

    /**
     * The same scheduler keeping kube-scheduler's backoff queue: a pod whose attempt failed is tried again in the first
     * round after {@code initial} doubled per failed attempt, at most {@code max}, has passed (kube-scheduler's
     * {@code podInitialBackoffSeconds} and {@code podMaxBackoffSeconds}). Without it every pending pod is tried in every
     * round, which is kube-scheduler with rounds further apart than its backoff; with it the pods of one job, refused
     * together, come back in different rounds, as they do in kube-scheduler.
     */
    public SchedulerDriver backingOff(Duration initial, Duration max) {
        return new SchedulerDriver(target, settings, extenders, ties, preemptionOffsets, new PodBackoff(initial, max, Clock.systemUTC()),
                releasingDraClaims);
    }

    public SchedulerSettings settings() {
        return settings;
    }

    /** Tries every pending pod once; returns what became of each, in scheduling order. */
    public List<Decision> scheduleRound() {
        return scheduleRound(decision -> { });
    }

    /**
     * The same, with {@code afterEach} told of each decision once it is written to the API server and
     * before the next pod is tried: a check that needs every component to have caught up with a binding
     * before the next decision (the extender's informers, the kubelet, the device plugin) waits there.
     */
    public List<Decision> scheduleRound(Consumer<Decision> afterEach) {
        return attemptRound(attempt -> afterEach.accept(attempt.decision())).stream().map(Attempt::decision).toList();
    }

    /** The same, each pod's attempt told with the nodes refused on the way and why. */
    public List<Attempt> attemptRound(Consumer<Attempt> afterEach) {
        // In name order: the API server lists nodes in no stable order, and the order decides which of
        // several equally scored nodes a seeded tie-break picks (kube-scheduler walks its own node tree).
        var nodes = target.nodes().stream().sorted(Comparator.comparing(n -> n.getMetadata().getName())).toList();
        var pods = target.pods();
        var podsByNode = new HashMap<String, List<Pod>>();
        var pending = new ArrayList<Pod>();
        for (var pod : pods) {
            var nodeName = pod.getSpec().getNodeName();
            if (nodeName != null && !nodeName.isEmpty()) {
                if (!isFinished(pod)) {
                    podsByNode.computeIfAbsent(nodeName, n -> new ArrayList<>()).add(pod);
                }
            } else if (settings.schedulerName().equals(Objects.requireNonNullElse(pod.getSpec().getSchedulerName(), "default-scheduler"))
                    && !isFinished(pod)) {
                pending.add(pod);
            }
        }
        if (backoff != null) {
            pending.removeIf(pod -> !backoff.ready(pod));
        }
        pending.sort(QueueOrder.KUBE_SCHEDULER);
        var dra = pending.isEmpty() ? DraSnapshot.EMPTY : target.dra();
        var attempts = new ArrayList<Attempt>();
        for (var pod : pending) {
            var attempt = cycle.attempt(pod, nodes, podsByNode, dra);
            if (attempt.decision() instanceof Decision.Unschedulable unschedulable && preemption != null) {
                attempt = preempt(attempt, unschedulable, nodes, podsByNode, dra);
            }
            var decision = attempt.decision();
            if (decision instanceof Decision.Bound bound && dra.inUse() && DraFilter.usesDra(pod, dra)) {
                var reserved = reserve(pod, bound, nodes, dra);
                decision = reserved.decision();
                dra = reserved.dra();
            }
            if (decision instanceof Decision.Bound bound && binder(pod) != null) {
                decision = bindThroughExtender(binder(pod), pod, bound);
            }
            target.write(pod, decision);
            if (decision instanceof Decision.Bound bound) {
                pod.getSpec().setNodeName(bound.node());
                podsByNode.computeIfAbsent(bound.node(), n -> new ArrayList<>()).add(pod);
            }
            if (backoff != null) {
                if (decision instanceof Decision.Bound) {
                    backoff.scheduled(pod);
                } else {
                    backoff.failed(pod);
                }
            }
            attempt = attempt.endingIn(decision, attempt.preemption());
            attempts.add(attempt);
            afterEach.accept(attempt);
        }
        return attempts;
    }

    /**
     * kube-scheduler's PostFilter: victims chosen and evicted (a graceful delete), the pod nominated to their node.
     * For the rest of the round the pod holds its place there, as kube-scheduler's nominated pods do for pods of
     * lower priority; the victims are gone from the round's view.
     */
    private Attempt preempt(Attempt attempt, Decision.Unschedulable unschedulable, List<Node> nodes, Map<String, List<Pod>> podsByNode,
                            DraSnapshot dra) {
        var pod = attempt.pod();
        var budgets = target.budgets();
        var draFilter = dra.inUse() && DraFilter.usesDra(pod, dra) ? cycle.draFilterForPreemption() : null;
        return switch (preemption.preempt(pod, nodes, podsByNode, unschedulable.unresolvable(), budgets, dra, draFilter)) {
            case ApiPreemption.Outcome.None none -> attempt.endingIn(new Decision.Unschedulable(unschedulable.pod(),
                    unschedulable.message() + " preemption: " + none.why(), unschedulable.reasons(), unschedulable.unresolvable()), none.why());
            case ApiPreemption.Outcome.Nominate nominate -> {
                var onNode = podsByNode.computeIfAbsent(nominate.node(), n -> new ArrayList<>());
                onNode.removeAll(nominate.victims());
                onNode.add(pod);
                yield attempt.endingIn(new Decision.Nominated(unschedulable.pod(), nominate.node(),
                        nominate.victims().stream().map(v -> v.getMetadata().getNamespace() + "/" + v.getMetadata().getName()).toList(),
                        unschedulable.message()), "");
            }
        };
    }

    private record Reserved(Decision decision, DraSnapshot dra) {
    }

    /**
     * The DynamicResources plugin's Reserve and PreBind on the chosen node: the allocation its filter found there is
     * written to the claims before anything binds the pod, and its devices are in use for the rest of the round.
     */
    private Reserved reserve(Pod pod, Decision.Bound bound, List<Node> nodes, DraSnapshot dra) {
        var node = nodes.stream().filter(n -> n.getMetadata().getName().equals(bound.node())).findFirst().orElseThrow();
        return switch (cycle.draVerdict(pod, node, dra)) {
            case DraFilter.NotDra notDra -> new Reserved(bound, dra);
            case DraFilter.Refused refused -> new Reserved(new Decision.Failed(bound.pod(), "dynamic resources: " + refused.reason()), dra);
            case DraFilter.Fits fits -> {
                try {
                    target.reserve(pod, bound.node(), fits);
                } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                    yield new Reserved(new Decision.Failed(bound.pod(), "dynamic resources: writing the claims: " + e.getMessage()), dra);
                }
                yield new Reserved(bound, dra.withAllocated(fits.allocations()));
            }
        };
    }

    /** kube-scheduler's binder: the first interested extender with a bind verb binds instead of kube-scheduler. */
    private SchedulerExtender binder(Pod pod) {
        return extenders.stream().filter(extender -> extender.settings().binds() && extender.isInterested(pod)).findFirst().orElse(null);
    }

    /** The extender binds (and records the devices); an error leaves the pod pending, to be retried, as kube-scheduler does. */
    private Decision bindThroughExtender(SchedulerExtender extender, Pod pod, Decision.Bound bound) {
        String error;
        try {
            error = extender.bind(pod, bound.node());
        } catch (ExtenderCallException e) {
            error = "extender " + extender.settings().urlPrefix() + ": " + e.getMessage();
        }
        return error.isEmpty() ? new Decision.Bound(bound.pod(), bound.node(), bound.totals(), bound.pluginScores(), true)
                : new Decision.Failed(bound.pod(), "binding rejected: " + error);
    }

    private static boolean isFinished(Pod pod) {
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }
}
