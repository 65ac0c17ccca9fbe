package io.hetgpu.testcluster.scheduler;

import io.hetgpu.kubescheduler.selection.TieBreak;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
 * priority first, then in the order they reached the queue ({@link QueueOrder}), runs each through a {@link SchedulingCycle} against the API server's
 * current nodes and pods, binds it or records a FailedScheduling event. One pod at a time, as
 * kube-scheduler does, so each decision sees the ones before it.
 *
 * <p>Binding sets the PodScheduled condition, then {@code spec.nodeName} with a merge patch, rather than through
 * the {@code pods/binding} subresource (which the in-process API server serves, {@code api.PodBinding}, for the
 * bind handshake to come): the condition's time is written to the
 * nanosecond, where a real API server (metav1.Time) writes whole seconds: with whole seconds, a pod bound
 * in the same second as, but after, a node's {@code hetgpu.io/gpu-free} list was read looks to the
 * extender as if the list already accounted for it, and its GPUs look free until the device plugin
 * publishes again.
 */
public final class SchedulerDriver {

    private final KubernetesClient client;
    private final SchedulerSettings settings;
    private final HttpClient http;
    private final TieBreak ties;
    private final SchedulingCycle cycle;
    /** The seed of kube-scheduler's ApiPreemption's walk, when this driver runs it; null when it does not. */
    private final Random preemptionOffsets;
    private final ApiPreemption preemption;
    /** kube-scheduler's backoff queue, when this driver keeps one; null when every pending pod is tried each round. */
    private final PodBackoff backoff;
    private final List<ExtenderClient> extenders;

    public SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, long seed) {
        this(client, settings, http, TieBreak.random(new Random(seed)));
    }

    public SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, TieBreak ties) {
        this(client, settings, http, ties, null, null);
    }

    private SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, TieBreak ties, Random preemptionOffsets,
                            PodBackoff backoff) {
        this.client = client;
        this.settings = settings;
        this.http = http;
        this.ties = ties;
        this.extenders = settings.extenders().stream().map(e -> new ExtenderClient(e, http)).toList();
        this.cycle = new SchedulingCycle(extenders, ties);
        this.preemptionOffsets = preemptionOffsets;
        this.preemption = preemptionOffsets == null ? null : new ApiPreemption(extenders, preemptionOffsets);
        this.backoff = backoff;
    }

    /**
     * The same scheduler running kube-scheduler's ApiPreemption for a pod no node takes, as every cluster that
     * sets PriorityClasses does (its PostFilter plugin is on by default). Off in the plain constructors until the
     * simulator preempts too: the placement-equality test holds the two to the same decisions.
     *
     * @param seed the seed of the random offset at which each preemption starts its walk over the nodes
     */
    public SchedulerDriver preempting(long seed, TieBreak ties) {
        return new SchedulerDriver(client, settings, http, ties, new Random(seed), backoff);
    }

    /**
     * The same scheduler keeping kube-scheduler's backoff queue: a pod whose attempt failed is tried again in the first
     * round after {@code initial} doubled per failed attempt, at most {@code max}, has passed (kube-scheduler's
     * {@code podInitialBackoffSeconds} and {@code podMaxBackoffSeconds}). Without it every pending pod is tried in every
     * round, which is kube-scheduler with rounds further apart than its backoff; with it the pods of one job, refused
     * together, come back in different rounds, as they do in kube-scheduler.
     */
    public SchedulerDriver backingOff(Duration initial, Duration max) {
        return new SchedulerDriver(client, settings, http, ties, preemptionOffsets, new PodBackoff(initial, max, Clock.systemUTC()));
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
        // In name order: the API server lists nodes in no stable order, and the order decides which of
        // several equally scored nodes a seeded tie-break picks (kube-scheduler walks its own node tree).
        var nodes = client.nodes().list().getItems().stream().sorted(Comparator.comparing(n -> n.getMetadata().getName())).toList();
        var pods = client.pods().inAnyNamespace().list().getItems();
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
        var decisions = new ArrayList<Decision>();
        for (var pod : pending) {
            var decision = cycle.schedule(pod, nodes, podsByNode);
            if (decision instanceof Decision.Unschedulable unschedulable && preemption != null) {
                decision = preempt(pod, unschedulable, nodes, podsByNode);
            }
            if (decision instanceof Decision.Bound bound && binder(pod) != null) {
                decision = bindThroughExtender(binder(pod), pod, bound);
            }
            record(pod, decision);
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
            decisions.add(decision);
            afterEach.accept(decision);
        }
        return decisions;
    }

    /**
     * kube-scheduler's PostFilter: victims chosen and evicted (a graceful delete), the pod nominated to their node.
     * For the rest of the round the pod holds its place there, as kube-scheduler's nominated pods do for pods of
     * lower priority; the victims are gone from the round's view.
     */
    private Decision preempt(Pod pod, Decision.Unschedulable unschedulable, List<Node> nodes, Map<String, List<Pod>> podsByNode) {
        var budgets = client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems();
        return switch (preemption.preempt(pod, nodes, podsByNode, unschedulable.unresolvable(), budgets)) {
            case ApiPreemption.Outcome.None none -> new Decision.Unschedulable(unschedulable.pod(),
                    unschedulable.message() + " preemption: " + none.why(), unschedulable.reasons(), unschedulable.unresolvable());
            case ApiPreemption.Outcome.Nominate nominate -> {
                var onNode = podsByNode.computeIfAbsent(nominate.node(), n -> new ArrayList<>());
                onNode.removeAll(nominate.victims());
                onNode.add(pod);
                yield new Decision.Nominated(unschedulable.pod(), nominate.node(),
                        nominate.victims().stream().map(v -> v.getMetadata().getNamespace() + "/" + v.getMetadata().getName()).toList(),
                        unschedulable.message());
            }
        };
    }

    /** kube-scheduler's binder: the first interested extender with a bind verb binds instead of kube-scheduler. */
    private ExtenderClient binder(Pod pod) {
        return extenders.stream().filter(extender -> extender.settings().binds() && extender.isInterested(pod)).findFirst().orElse(null);
    }

    /** The extender binds (and records the devices); an error leaves the pod pending, to be retried, as kube-scheduler does. */
    private Decision bindThroughExtender(ExtenderClient extender, Pod pod, Decision.Bound bound) {
        String error;
        try {
            error = extender.bind(pod, bound.node());
        } catch (ExtenderCallException e) {
            error = "extender " + extender.settings().urlPrefix() + ": " + e.getMessage();
        }
        return error.isEmpty() ? new Decision.Bound(bound.pod(), bound.node(), bound.totals(), bound.pluginScores(), true)
                : new Decision.Failed(bound.pod(), "binding rejected: " + error);
    }

    private void record(Pod pod, Decision decision) {
        var ns = pod.getMetadata().getNamespace();
        var name = pod.getMetadata().getName();
        switch (decision) {
            case Decision.Bound bound when bound.byExtender() -> event(pod, "Normal", "Scheduled",
                    "Successfully assigned " + ns + "/" + name + " to " + bound.node());
            case Decision.Bound bound -> {
                // The binding subresource sets PodScheduled with the time of binding; the extender reads
                // it to tell pods bound after a node's free-device list was read. A real API server writes
                // it to the second; this one to the nanosecond (see the class comment).
                var now = Instant.now().toString();
                client.pods().inNamespace(ns).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\""
                                + now + "\"}]}}");
                client.pods().inNamespace(ns).withName(name)
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"nodeName\":\"" + bound.node() + "\"}}");
                event(pod, "Normal", "Scheduled", "Successfully assigned " + ns + "/" + name + " to " + bound.node());
            }
            case Decision.Unschedulable unschedulable -> event(pod, "Warning", "FailedScheduling", unschedulable.message());
            case Decision.Nominated nominated -> {
                for (var victim : nominated.victims()) {
                    var namespaceAndName = victim.split("/", 2);
                    var evicted = client.pods().inNamespace(namespaceAndName[0]).withName(namespaceAndName[1]);
                    var victimPod = evicted.get();
                    if (victimPod != null) {
                        event(victimPod, "Normal", "Preempted", "Preempted by pod " + pod.getMetadata().getUid() + " on node " + nominated.node());
                        evicted.delete();
                    }
                }
                client.pods().inNamespace(ns).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"status\":{\"nominatedNodeName\":\"" + nominated.node() + "\"}}");
                event(pod, "Warning", "FailedScheduling", nominated.message() + " Preempting " + nominated.victims().size()
                        + " pod(s) on node " + nominated.node() + ".");
            }
            case Decision.Failed failed -> event(pod, "Warning", "FailedScheduling", failed.error());
        }
    }

    private void event(Pod pod, String type, String reason, String message) {
        var now = Instant.now().toString();
        client.v1().events().inNamespace(pod.getMetadata().getNamespace()).resource(new EventBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName() + "." + Long.toHexString(System.nanoTime()))
                .withNamespace(pod.getMetadata().getNamespace())
                .endMetadata()
                .withInvolvedObject(new ObjectReferenceBuilder().withKind("Pod").withApiVersion("v1")
                        .withNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                        .withUid(pod.getMetadata().getUid()).build())
                .withType(type).withReason(reason).withMessage(message)
                .withReportingComponent(settings.schedulerName()).withNewSource(settings.schedulerName(), null)
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .build()).create();
    }

    private static boolean isFinished(Pod pod) {
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }
}
