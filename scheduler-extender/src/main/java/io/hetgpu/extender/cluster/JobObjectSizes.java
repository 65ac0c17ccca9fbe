package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobSizes;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Job sizes from the objects the cluster already has: PodGroups' {@code minMember} (Volcano, coscheduling),
 * kube-scheduler's PodGroups and Workloads' gang {@code minCount}, Jobs' completions, JobSets' replicated jobs and
 * Kubeflow training jobs' replica specs, each followed by an informer. A count the pod states
 * ({@code hetgpu.io/job-size}) always wins.
 *
 * <p>Only what the cluster serves is watched: each kind's API is looked up in discovery at start and again every few
 * minutes, so a CRD installed later is followed from then on and one removed is let go. A kind the cluster does not
 * serve costs nothing and delays nothing; its jobs' sizes are unknown, saying so. A kind the extender may not list (403:
 * its ClusterRole lacks it) is said once in the log and keeps being tried (fabric8's backoff, up to 32 s), its sizes
 * unknown meanwhile; it does not hold {@link #start()} back either.
 *
 * <p>Memory: of each object only its key, resourceVersion and count are kept ({@link SizeTable}), not its pod templates.
 */
public final class JobObjectSizes implements JobSizes, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JobObjectSizes.class);
    /** How often discovery is asked again: a CRD installed meanwhile is followed from the next look. */
    static final Duration RECHECK = Duration.ofMinutes(3);
    /** How soon discovery is asked again after it failed (the API server down or refusing). */
    static final Duration RETRY = Duration.ofSeconds(5);

    private final KubernetesClient client;
    private final Duration recheck;
    private final Duration retry;
    private final Map<JobObjectKind, Followed> followed = new LinkedHashMap<>();
    private final ScheduledExecutorService discovery = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("job-sizes-discovery").factory());
    private final CompletableFuture<Void> resolved = new CompletableFuture<>();
    private volatile boolean started;
    private volatile boolean closed;
    /** The last discovery failure, said once until discovery answers again. */
    private volatile String discoveryFailure = "";
    private boolean reported;

    public JobObjectSizes(KubernetesClient client) {
        this(client, RECHECK, RETRY);
    }

    JobObjectSizes(KubernetesClient client, Duration recheck, Duration retry) {
        this.client = client;
        this.recheck = recheck;
        this.retry = retry;
        JobObjectKind.ALL.forEach(kind -> followed.put(kind, new Followed(kind)));
    }

    /**
     * The resources sizes are read from, as RBAC names them ("batch/jobs", "scheduling.volcano.sh/podgroups"): the
     * extender's ClusterRole grants list and watch on each, whether or not a cluster serves it.
     */
    public static List<String> resources() {
        return JobObjectKind.ALL.stream().map(kind -> kind.group() + "/" + kind.plural()).distinct().toList();
    }

    /**
     * Looks the kinds up and starts following those served. The future completes once every kind is known not served,
     * refused (403), or listed; it waits out an API server that is down, as the cluster view's does.
     */
    public synchronized CompletableFuture<Void> start() {
        if (!started && !closed) {
            started = true;
            discovery.execute(this::askDiscovery);
        }
        return resolved.copy();
    }

    /** Whether every kind is known not served, refused, or listed: until then a size may be unknown for want of a list. */
    public boolean synced() {
        return followed.values().stream().allMatch(Followed::resolved);
    }

    /** What is still awaited, for a probe or a log line; empty once {@link #synced()}. */
    public Optional<String> unsynced() {
        var waiting = followed.values().stream().filter(one -> !one.resolved()).map(one -> one.kind.served()).toList();
        return waiting.isEmpty() ? Optional.empty() : Optional.of("job sizes: waiting for " + String.join(", ", waiting)
                + (discoveryFailure.isEmpty() ? "" : "; API discovery last failed: " + discoveryFailure));
    }

    @Override
    public OptionalInt membersOf(JobMembership job) {
        return JobObjectCounts.membersOf(job, followed::get);
    }

    @Override
    public Optional<String> whyUnknown(JobMembership job) {
        return JobObjectCounts.whyUnknown(job, followed::get);
    }

    /** One look at discovery: each kind followed in the first version served, let go where none is. */
    private void askDiscovery() {
        if (closed) {
            return;
        }
        var answers = new HashMap<String, Optional<APIResourceList>>();
        boolean failed = false;
        for (var one : followed.values()) {
            String served;
            try {
                served = one.kind.servedVersion(apiVersion -> answers.computeIfAbsent(apiVersion,
                        // null on 404: the group or version is not served at all.
                        asked -> Optional.ofNullable(client.getApiResources(asked))));
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                failed = true;
                var failure = ApiFaults.describe(e);
                one.discoveryFailed(failure);
                if (!failure.equals(discoveryFailure)) {
                    LOG.warn("job sizes: asking the API server which APIs it serves failed, retrying every {} ms: {}", retry.toMillis(), failure);
                    LOG.debug("job sizes: the failure in full", e);
                }
                discoveryFailure = failure;
                continue;
            }
            if (served.isEmpty()) {
                one.notServed();
            } else {
                one.follow(served);
            }
        }
        if (!failed && !discoveryFailure.isEmpty()) {
            LOG.info("job sizes: the API server answers discovery again");
            discoveryFailure = "";
        }
        if (!failed && !reported) {
            // Once, for the admin: which sizes this cluster can give at all.
            reported = true;
            var notServed = followed.values().stream().filter(one -> "".equals(one.version)).map(one -> one.kind.served()).toList();
            if (notServed.isEmpty()) {
                LOG.info("job sizes: the cluster serves every kind of object they are read from");
            } else {
                LOG.info("job sizes: the cluster does not serve {}; the jobs these would size have sizes only where their pods "
                        + "state hetgpu.io/job-size", String.join(", ", notServed));
            }
        }
        checkResolved();
        if (!closed) {
            var next = failed ? retry : recheck;
            discovery.schedule(this::askDiscovery, next.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void checkResolved() {
        if (synced()) {
            resolved.complete(null);
        }
    }

    /** One kind: whether and in which version the cluster serves it, its informer and its counts. */
    private final class Followed implements JobObjectCounts.KindTable {
        private final JobObjectKind kind;
        /** Null until discovery answered; "" when not served; else the version followed. */
        private volatile String version;
        private volatile SharedIndexInformer<GenericKubernetesResource> informer;
        private volatile SizeTable table;
        /** Why the last look at discovery failed, while none has answered for this kind. */
        private volatile String discoveryFailure = "";
        /** The last list or watch failure, said once; "" after a list that succeeded. */
        private volatile String lastFailure = "";
        private volatile boolean forbidden;

        Followed(JobObjectKind kind) {
            this.kind = kind;
        }

        /** Known not served, refused, or listed. */
        boolean resolved() {
            var followedVersion = version;
            if (followedVersion == null) {
                return false;
            }
            var current = informer;
            return followedVersion.isEmpty() || forbidden || current != null && current.hasSynced();
        }

        @Override
        public String standing() {
            var followedVersion = version;
            if (followedVersion == null) {
                return "not yet known whether the cluster serves " + kind.served()
                        + (discoveryFailure.isEmpty() ? "" : ": asking failed: " + discoveryFailure);
            }
            if (followedVersion.isEmpty()) {
                return "the cluster does not serve " + kind.served();
            }
            var current = informer;
            if (current != null && current.hasSynced()) {
                return null;
            }
            if (forbidden) {
                return "the extender may not list " + kind.resource() + " (" + lastFailure + "): its ClusterRole must grant list and watch on them";
            }
            return kind.name() + " not yet listed from the API server" + (lastFailure.isEmpty() ? "" : "; last failure: " + lastFailure);
        }

        @Override
        public ObjectCount count(String namespace, String name) {
            var current = table;
            return current == null ? null : current.count(namespace, name);
        }

        void discoveryFailed(String failure) {
            discoveryFailure = failure;
        }

        synchronized void notServed() {
            discoveryFailure = "";
            if ("".equals(version)) {
                return;
            }
            if (version != null) {
                LOG.info("job sizes: the cluster no longer serves {}; its jobs' sizes are unknown", kind.served());
            } else {
                LOG.debug("job sizes: the cluster does not serve {}", kind.served());
            }
            stop();
            version = "";
        }

        synchronized void follow(String served) {
            discoveryFailure = "";
            if (served.equals(version) || closed) {
                return;
            }
            stop();
            var sizes = new SizeTable(kind.count());
            var watching = client.genericKubernetesResources(kind.context(served)).inAnyNamespace().runnableInformer(0);
            watching.itemStore(sizes);
            watching.exceptionHandler(handler());
            table = sizes;
            informer = watching;
            version = served;
            LOG.info("job sizes: following {} ({})", kind.name(), kind.apiVersion(served));
            watching.start().whenComplete((listed, failure) -> {
                if (failure == null) {
                    lastFailure = "";
                    forbidden = false;
                    checkResolved();
                }
            });
        }

        /**
         * Every failure retried, the first list's included (a ClusterRole applied later, an API server back); each kind of
         * failure said once, a 403 as what RBAC lacks.
         */
        private ExceptionHandler handler() {
            return (isStarted, failure) -> {
                var described = ApiFaults.describe(failure);
                boolean refused = code(failure) == 403;
                if (!described.equals(lastFailure)) {
                    if (refused) {
                        LOG.warn("job sizes: the extender may not list {} ({}); sizes from {} objects are unknown until its ClusterRole "
                                + "grants list and watch on {}", kind.resource(), described, kind.name(), kind.resource());
                    } else {
                        LOG.warn("job sizes: {} {} failed, retrying with backoff: {}", isStarted ? "following" : "listing", kind.resource(), described);
                    }
                }
                LOG.debug("job sizes: {}: the failure in full", kind.resource(), failure);
                lastFailure = described;
                forbidden = refused;
                if (refused) {
                    checkResolved();
                }
                return true;
            };
        }

        synchronized void stop() {
            var current = informer;
            if (current != null) {
                current.close();
            }
            informer = null;
            table = null;
            forbidden = false;
            lastFailure = "";
        }
    }

    private static int code(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof KubernetesClientException api && api.getCode() > 0) {
                return api.getCode();
            }
        }
        return 0;
    }

    @Override
    public void close() {
        closed = true;
        discovery.shutdownNow();
        followed.values().forEach(Followed::stop);
        resolved.cancel(false);
    }
}
