package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.ClusterView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * No verb before the caches: until the cluster view has listed nodes, pods, volumes and claims, a verb would judge an empty
 * or partial cluster (every GPU free, no job peers), and a bind would hand out GPUs already taken. Each verb asks here first
 * and answers the refusal, which kube-scheduler shows in the pod's events; refusals are counted per verb for the metrics.
 * Without an API server the view is {@link ClusterView#REQUEST_ONLY}, always synced: requests are answered at once.
 */
public final class CacheGate {

    /** The verbs that ask, in the order kube-scheduler calls them. */
    public static final List<String> VERBS = List.of("filter", "prioritize", "preempt", "bind");

    private final ClusterView cluster;
    private final Map<String, LongAdder> refusals = Map.of("filter", new LongAdder(), "prioritize", new LongAdder(),
            "preempt", new LongAdder(), "bind", new LongAdder());

    public CacheGate(ClusterView cluster) {
        this.cluster = cluster;
    }

    /** Why {@code verb} must not act now, counted; empty when the caches are synced. */
    Optional<String> refusal(String verb) {
        var why = cluster.unsynced();
        if (why.isPresent()) {
            refusals.get(verb).increment();
        }
        return why;
    }

    /** For verbs whose answer has no Error field (prioritize, preempt): the refusal thrown, for the HTTP front to answer 503. */
    void check(String verb) {
        var why = refusal(verb);
        if (why.isPresent()) {
            throw new NotSynced(why.get());
        }
    }

    /** How many calls of {@code verb} were refused so far. */
    public long refused(String verb) {
        return refusals.get(verb).sum();
    }

    /** Why the extender is not ready (the same text the verbs refuse with), or empty. */
    public Optional<String> notReady() {
        return cluster.unsynced();
    }

    /** Why the extender will not become ready again without a restart, or empty. */
    public Optional<String> wedged() {
        return cluster.stopped();
    }

    /**
     * A verb asked before the caches synced, where kube-scheduler's answer has no room for an Error: the HTTP front answers
     * it with a 503 and the reason.
     */
    public static final class NotSynced extends RuntimeException {
        public NotSynced(String reason) {
            super(reason, null, false, false);
        }
    }
}
