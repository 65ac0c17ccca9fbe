package io.hetgpu.extender.explain;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.cluster.ApiFaults;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.service.PreemptionAdvice;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.gpu.Quote;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells users where their pod would go and why: one Kubernetes Event per pod per {@code interval}
 * (kube-scheduler may prioritize a pod many times while it waits), posted off the request path.
 * Also logs every full score table at debug level.
 *
 * <p>Only pods the API server has (as the informers know them: same UID, namespace and name) get an
 * Event: the extender answers whoever reaches its port, and an invented pod in a request must not
 * make it write Events into any namespace the caller names. Nor may a request that names a real pod but
 * describes it otherwise (invented annotations, priority, requests) put its text on that pod: the Event
 * is written only when the pod as the informers hold it reads as the very pod the answer was computed for,
 * and it is addressed from the informers' copy.
 */
public final class PlacementEvents implements BiConsumer<PodRequest, ScoreTable> {

    private static final Logger LOG = LoggerFactory.getLogger(PlacementEvents.class);
    static final String REASON = "HetgpuPlacement";
    static final String PREEMPTION_REASON = "HetgpuPreemption";
    static final String VICTIM_REASON = "HetgpuPreemptionVictim";
    static final String COMPONENT = "hetgpu-scheduler-extender";
    private static final int MAX_TRACKED_PODS = 10_000;
    private static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;
    private final Clock clock;
    private final Duration interval;
    private final Executor executor;
    private final Function<PodRequest, PodRequest> informerCopy;
    private final Function<String, Pod> podByUid;
    private final PriorityThresholds priority;
    private final Supplier<ThroughputSource.Snapshot> throughputs;
    /** Last event per pod, oldest first, bounded; its only job is the throttle. */
    private final Map<String, Instant> lastSent = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > MAX_TRACKED_PODS;
        }
    };

    /**
     * @param executor     where Events are posted; bound its queue, so that a slow API server costs advice, not memory
     * @param informerCopy the pod a request names as the informers hold it, read as a request ({@link #asInformersHoldIt}),
     *                     or null when they hold no pod of that UID, namespace and name
     * @param podByUid     a pod the informers know, by UID, or null: where the Events on preemption's victims go
     * @param priority     the policy's priority thresholds: an Event says when a pod's priority annotation was ignored
     */
    public PlacementEvents(KubernetesClient client, Clock clock, Duration interval, Executor executor,
                           Function<PodRequest, PodRequest> informerCopy, Function<String, Pod> podByUid, PriorityThresholds priority) {
        this(client, clock, interval, executor, informerCopy, podByUid, priority, () -> null);
    }

    /**
     * @param throughputs the workload speed table the policy reads now (its {@code ThroughputSource}), so that an Event
     *                    gives the figures a speed decision rested on; a supplier of null where there is none
     */
    public PlacementEvents(KubernetesClient client, Clock clock, Duration interval, Executor executor,
                           Function<PodRequest, PodRequest> informerCopy, Function<String, Pod> podByUid, PriorityThresholds priority,
                           Supplier<ThroughputSource.Snapshot> throughputs) {
        this.throughputs = throughputs;
        this.podByUid = podByUid;
        this.priority = priority;
        this.client = client;
        this.clock = clock;
        this.interval = interval;
        this.executor = executor;
        this.informerCopy = informerCopy;
    }

    /**
     * The informers' copy of the pod a request names, read with {@code parser}: null when the request has no UID, when no
     * pod has that UID, or when the pod with it has another namespace or name.
     */
    public static Function<PodRequest, PodRequest> asInformersHoldIt(Function<String, Pod> podByUid, PodRequestParser parser) {
        return asked -> {
            if (asked.uid().isEmpty()) {
                return null;
            }
            var known = podByUid.apply(asked.uid());
            if (known == null || known.getMetadata() == null || !asked.namespace().equals(known.getMetadata().getNamespace())
                    || !asked.name().equals(known.getMetadata().getName())) {
                return null;
            }
            try {
                return parser.parse(known);
            } catch (InvalidPodRequestException e) {
                return null;
            }
        };
    }

    /**
     * The pod to write about, from the informers' copy: only when they hold it and it reads exactly as the request's pod
     * (else the answer, and so the text, was computed for a pod that is not the one the API server has).
     */
    private PodRequest known(PodRequest asked) {
        var copy = informerCopy.apply(asked);
        return copy != null && copy.equals(asked) ? copy : null;
    }

    /** Only the debug log, for an extender without an API server. */
    public static BiConsumer<PodRequest, ScoreTable> logOnly() {
        return (pod, table) -> debug(pod, table);
    }

    @Override
    public void accept(PodRequest pod, ScoreTable table) {
        debug(pod, table);
        var now = clock.instant();
        // The throttle first: prioritize calls this for every pod it answers, and reading the informers' copy parses a pod.
        if (throttled(pod.uid(), now)) {
            return;
        }
        var known = known(pod);
        if (known == null) {
            return;
        }
        synchronized (lastSent) {
            if (throttled(known.uid(), now)) {
                return;
            }
            lastSent.put(known.uid(), now);
        }
        // First, so that the Event's length limit never cuts it: it tells the pod's author why the annotation did nothing.
        var ignored = priority.ignoredHint(known);
        // The table now: a few seconds newer than the one the answer read at most, and the figures are what a user can check.
        var message = (ignored.isEmpty() ? "" : ignored + "; ") + PlacementExplanation.of(table, PodSpeeds.of(known.workload(), throughputs.get()));
        executor.execute(() -> post(known, message, now));
    }

    /** Whether an Event was posted for the pod {@code uid} less than an interval before {@code now}. */
    private boolean throttled(String uid, Instant now) {
        synchronized (lastSent) {
            var last = lastSent.get(uid);
            return last != null && now.isBefore(last.plus(interval));
        }
    }

    /** The preempt verb's advice in the log only, for an extender without an API server or Events. */
    public static void logPreemption(PreemptionAdvice advice) {
        LOG.info("preemption for {}: {}", Quote.escaped(advice.pod().displayName()), Quote.escaped(advice.explain()));
    }

    /** The preempt verb's advice as an Event on the pod it was asked for (not throttled: preemption is rare). */
    public void preemption(PreemptionAdvice advice) {
        logPreemption(advice);
        var pod = known(advice.pod());
        if (pod == null) {
            return;
        }
        var now = clock.instant();
        var message = advice.explain();
        executor.execute(() -> post(pod, PREEMPTION_REASON, message, now));
        advice.victimsReason().ifPresent(why -> {
            for (var uid : advice.kept().getFirst().victimUids()) {
                var victim = podByUid.apply(uid);
                if (victim != null && victim.getMetadata() != null) {
                    var namespace = victim.getMetadata().getNamespace();
                    var name = victim.getMetadata().getName();
                    executor.execute(() -> post(namespace, name, uid, VICTIM_REASON, why, now));
                }
            }
        });
    }

    private void post(PodRequest pod, String message, Instant now) {
        post(pod, REASON, message, now);
    }

    private void post(PodRequest pod, String reason, String message, Instant now) {
        post(pod.namespace(), pod.name(), pod.uid(), reason, message, now);
    }

    private void post(String namespace, String name, String uid, String reason, String message, Instant now) {
        var text = message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE - 1) + "…" : message;
        var event = new EventBuilder()
                .withNewMetadata().withNamespace(namespace)
                .withName(name + "." + Long.toHexString(now.toEpochMilli())).endMetadata()
                .withNewInvolvedObject().withKind("Pod").withApiVersion("v1").withNamespace(namespace)
                .withName(name).withUid(uid).endInvolvedObject()
                .withReason(reason).withType("Normal").withMessage(text)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .withFirstTimestamp(now.toString()).withLastTimestamp(now.toString()).withCount(1)
                .build();
        try {
            client.v1().events().inNamespace(namespace).resource(event).create();
        } catch (RuntimeException e) {
            // One line with its cause (fabric8's own message often says only "An error has occurred."); the trace at debug level.
            LOG.warn("could not post the placement event of {}/{}: {}", Quote.escaped(namespace), Quote.escaped(name),
                    Quote.escaped(ApiFaults.describe(e)));
            LOG.debug("posting the placement event of {}/{}", Quote.escaped(namespace), Quote.escaped(name), e);
        }
    }

    private static void debug(PodRequest pod, ScoreTable table) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("scores for {}:\n{}", Quote.escaped(pod.displayName()), table.render());
        }
    }
}
