package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * kube-scheduler's backoff queue: a pod whose attempt failed (unschedulable, an extender's error, a failed bind) is
 * tried again only once its backoff has passed, {@code podInitialBackoffSeconds} doubled with each failed attempt up to
 * {@code podMaxBackoffSeconds} (1 s and 10 s unless the configuration says otherwise). The pods of one job that were
 * refused together therefore come back in different passes of the queue, which is what a whole job's held plan must
 * outlast.
 */
final class PodBackoff {

    /** kube-scheduler's defaults, which {@code manifests/} keep. */
    static final Duration DEFAULT_INITIAL = Duration.ofSeconds(1);
    static final Duration DEFAULT_MAX = Duration.ofSeconds(10);

    private record Waiting(int attempts, Instant until) {
    }

    private final Duration initial;
    private final Duration max;
    private final Clock clock;
    /** By pod UID: the pods whose last attempt failed. */
    private final Map<String, Waiting> waiting = new HashMap<>();

    PodBackoff(Duration initial, Duration max, Clock clock) {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff must be above 0 and its maximum at least the initial one, got " + initial + " and " + max);
        }
        this.initial = initial;
        this.max = max;
        this.clock = clock;
    }

    /** Whether the pod may be tried now: it never failed, or its backoff has passed. */
    synchronized boolean ready(Pod pod) {
        var wait = waiting.get(uid(pod));
        return wait == null || !clock.instant().isBefore(wait.until());
    }

    /** The pod's attempt failed: it waits twice as long as after its previous failure, at most the maximum. */
    synchronized void failed(Pod pod) {
        var attempts = waiting.containsKey(uid(pod)) ? waiting.get(uid(pod)).attempts() + 1 : 1;
        var backoff = initial;
        for (int i = 1; i < attempts && backoff.compareTo(max) < 0; i++) {
            backoff = backoff.multipliedBy(2);
        }
        waiting.put(uid(pod), new Waiting(attempts, clock.instant().plus(backoff.compareTo(max) > 0 ? max : backoff)));
    }

    /** The pod was bound: it leaves the queue. */
    synchronized void scheduled(Pod pod) {
        waiting.remove(uid(pod));
    }

    private static String uid(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName() + "/" + pod.getMetadata().getUid();
    }
}
