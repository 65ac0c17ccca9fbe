package io.hetgpu.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.cluster.ApiServerPodBinder;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.cluster.InformerClusterView;
import io.hetgpu.extender.cluster.JobObjectSizes;
import io.hetgpu.extender.cluster.LearnedThroughputsConfigMap;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.ThroughputLearning;
import io.hetgpu.extender.explain.PlacementEvents;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.http.PollingEventLoops;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.explain.PlanLog;
import io.hetgpu.extender.trust.RecordKeySecret;
import io.hetgpu.extender.trust.RecordTrust;
import io.vertx.core.Vertx;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One running scheduler extender: configuration, cluster state (informers when an API client is
 * given, the request alone otherwise), policy and HTTP server, wired once. The command line and the
 * test cluster both start it here, so the test cluster runs the very same wiring.
 */
public final class Extender implements AutoCloseable {

    /**
     * How long a stop waits for Vert.x to end its event loops. Left running, their threads sit in {@code epoll_wait}, and
     * HotSpot's exit waits up to 300 ms for threads in native code: every stop took a third of a second more than its work.
     */
    static final Duration VERTX_CLOSE = Duration.ofSeconds(5);

    /** Events waiting for the API server; one a minute per pending pod is plenty for a cluster's worth. */
    private static final int EVENT_QUEUE = 1024;

    private final Vertx vertx;
    private final ExtenderServer server;
    private final Optional<InformerClusterView> informers;
    private final CompletableFuture<Void> synced;
    private final Optional<ExecutorService> eventWriter;
    private final Optional<ApiServerPodBinder> binder;
    private final Optional<JobObjectSizes> jobObjects;
    private final Optional<RecordKeySecret> keySecret;
    private final Optional<ThroughputLearning> learning;

    private Extender(Vertx vertx, ExtenderServer server, Optional<InformerClusterView> informers, CompletableFuture<Void> synced,
                     Optional<ExecutorService> eventWriter, Optional<ApiServerPodBinder> binder, Optional<JobObjectSizes> jobObjects,
                     Optional<RecordKeySecret> keySecret, Optional<ThroughputLearning> learning) {
        this.keySecret = keySecret;
        this.learning = learning;
        this.binder = binder;
        this.jobObjects = jobObjects;
        this.vertx = vertx;
        this.server = server;
        this.informers = informers;
        this.synced = synced;
        this.eventWriter = eventWriter;
    }

    /**
     * Starts listening. Informers start in the background and wait out an API server that is down or refusing, retrying
     * for ever: until they have synced, {@code /readyz} answers 503, every verb refuses saying the extender is waiting for
     * its caches, and {@link #synced()} is incomplete.
     *
     * @throws IllegalStateException when the port cannot be bound, with the reason
     */
    public static Extender start(ExtenderConfig settings, ServerOptions options, Optional<KubernetesClient> client) {
        // With an API server, records are judged by the key replicas share, read from its Secret once the extender runs.
        var setup = client.isPresent() ? ExtenderSetup.of(settings).withTrust(RecordTrust.awaitingKey(Set.copyOf(settings.schedulerNames())))
                : ExtenderSetup.of(settings);
        var parser = setup.parser();
        ClusterView cluster = ClusterView.REQUEST_ONLY;
        Optional<InformerClusterView> informers = Optional.empty();
        Optional<JobObjectSizes> jobObjects = Optional.empty();
        Optional<RecordKeySecret> keySecret = Optional.empty();
        Optional<ThroughputLearning> learning = Optional.empty();
        Optional<ExecutorService> eventWriter = Optional.empty();
        var synced = CompletableFuture.<Void>completedFuture(null);
        var listener = PlacementEvents.logOnly();
        java.util.function.Consumer<io.hetgpu.extender.service.PreemptionAdvice> preemptionListener = PlacementEvents::logPreemption;
        if (client.isPresent()) {
            var view = new InformerClusterView(client.get(), parser, settings.rackLabel(), setup.trust());
            // Pods' ResourceClaims and DeviceClasses read from the view's DRA informers (none where the cluster serves no DRA).
            setup = setup.withDra(view.dra());
            parser = setup.parser();
            // Not synced until the replicas' record key is in use: every record the view holds is judged by it by then.
            // In its pod, the service account's namespace; from a kubeconfig without one, "default", as kubectl takes it.
            var namespace = client.get().getNamespace() == null ? "default" : client.get().getNamespace();
            var secret = new RecordKeySecret(client.get(), namespace, settings.recordKeySecret(), new SecureRandom());
            keySecret = Optional.of(secret);
            synced = view.start();
            secret.whenRead().thenAccept(view::useRecordKey);
            // Job sizes from PodGroups, Workloads, Jobs, JobSets and training jobs, where the cluster serves them. Not part
            // of synced(): until its first lists a size it has not read yet is unknown, saying so.
            var sizes = new JobObjectSizes(client.get());
            sizes.start();
            jobObjects = Optional.of(sizes);
            informers = Optional.of(view);
            var learner = setup.learner();
            if (learner.isPresent()) {
                // The learner the policy reads (policy.learning on), fed by the pods that end and kept in a ConfigMap beside
                // the record key's Secret; off the informer's thread.
                var following = new ThroughputLearning(learner.get(), new LearnedThroughputsConfigMap(client.get(), namespace),
                        ThroughputLearning.following(view, parser, setup.catalog(), setup.trust(), Set.copyOf(settings.schedulerNames()),
                                ThroughputLearning.POD_RUNS), ThroughputLearning.Settings.DEFAULTS);
                view.onPods(following::seen);
                following.start(view::pods);
                learning = Optional.of(following);
            }
            cluster = view;
            if (settings.events()) {
                // A bounded queue: while the API server is slow, newer advice is dropped rather than queued without end.
                var writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(EVENT_QUEUE),
                        Thread.ofPlatform().daemon().name("events").factory(), new ThreadPoolExecutor.DiscardPolicy());
                eventWriter = Optional.of(writer);
                var placementEvents = new PlacementEvents(client.get(), Clock.systemUTC(), Duration.ofSeconds(settings.eventIntervalSeconds()),
                        writer, PlacementEvents.asInformersHoldIt(view::podByUid, parser), view::podByUid, settings.priority(),
                        setup.policy().throughputs()::current);
                listener = placementEvents;
                preemptionListener = placementEvents::preemption;
            }
        }
        var metrics = new ExtenderMetrics();
        var events = listener;
        var preemptionEvents = preemptionListener;
        var bindLimits = setup.bindLimits();
        var nodeStates = setup.nodeStates();
        // Without an API server the bind verb refuses every call, saying why: kube-scheduler then binds nothing. With one,
        // binds get a client of their own whose calls end within the bind's budget (no retries beyond it).
        var apiBinder = client.map(main -> ApiServerPodBinder.forBinds(main, bindLimits.budget()));
        PodBinder binder = apiBinder.<PodBinder>map(b -> b).orElse(PodBinder.NONE);
        var verbs = setup.verbs(cluster, (pod, table) -> {
            metrics.placed(pod, table, settings.policy().thresholds());
            events.accept(pod, table);
        }, advice -> {
            metrics.preemption(advice);
            preemptionEvents.accept(advice);
        }, binder, metrics::bound, jobObjects.<JobSizes>map(sizes -> sizes).orElse(JobSizes.STATED_ONLY), PlanLog.around(metrics.jobPlans()));
        var service = verbs.service();
        metrics.watchGate(verbs.gate());
        metrics.watchPlans(service.jobs()::gpusHeld);
        metrics.watchNodes(nodeStates);
        metrics.watchUntrustedRecords(setup.trust().refusals());
        metrics.watchFreeGpus(service);
        if (settings.reserve().isOn()) {
            metrics.watchReserve(service);
        }
        if (settings.jobHeadroom().isOn()) {
            metrics.watchJobHeadroom(service.jobs());
        }
        learning.ifPresent(metrics::watchLearning);
        var vertx = PollingEventLoops.vertx(options.eventLoopPoll());
        try {
            var server = ExtenderServer.start(vertx, options, verbs, metrics)
                    .toCompletionStage().toCompletableFuture().join();
            return new Extender(vertx, server, informers, synced, eventWriter, apiBinder, jobObjects, keySecret, learning);
        } catch (RuntimeException e) {
            keySecret.ifPresent(RecordKeySecret::close);
            learning.ifPresent(ThroughputLearning::close);
            informers.ifPresent(InformerClusterView::close);
            jobObjects.ifPresent(JobObjectSizes::close);
            apiBinder.ifPresent(ApiServerPodBinder::close);
            eventWriter.ifPresent(ExecutorService::shutdownNow);
            closeAndWait(vertx);
            var cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException) {
                // TLS files that cannot be used (the message names them), or the metrics port taken (it names the port).
                throw new IllegalStateException(cause.getMessage(), cause);
            }
            throw new IllegalStateException("cannot listen on " + options.host() + ":" + options.port() + ": "
                    + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()), e);
        }
    }

    public int port() {
        return server.port();
    }

    /** The metrics port as bound (a free one when 0 was asked), or {@link ServerOptions#NO_METRICS_PORT} when there is none. */
    public int metricsPort() {
        return server.metricsPort();
    }

    /**
     * The nodes and bound pods as this extender's informers see them now (empty without an API server):
     * for tools and tests that must wait until it has seen a change the API server already holds.
     */
    public NodeSnapshot view() {
        return informers.map(InformerClusterView::nodes).orElse(NodeSnapshot.EMPTY);
    }

    /**
     * Job sizes as the cluster's objects give them ({@link JobObjectSizes}), or only as pods state them without an API
     * server ({@link JobSizes#STATED_ONLY}).
     */
    public JobSizes jobSizes() {
        return jobObjects.<JobSizes>map(sizes -> sizes).orElse(JobSizes.STATED_ONLY);
    }

    /**
     * Completes when the informers have synced (at once without an API server), however long the API server takes; fails
     * only when an informer stops for good, which {@code /healthz} then reports.
     */
    public CompletableFuture<Void> synced() {
        return synced;
    }

    /** What this extender learns from the pods that end, with an API server and learning on. */
    public Optional<ThroughputLearning> learning() {
        return learning;
    }

    @Override
    public void close() {
        server.close();
        keySecret.ifPresent(RecordKeySecret::close);
        // Before the informers: its last write of what it learned.
        learning.ifPresent(ThroughputLearning::close);
        informers.ifPresent(InformerClusterView::close);
        jobObjects.ifPresent(JobObjectSizes::close);
        eventWriter.ifPresent(ExecutorService::shutdownNow);
        binder.ifPresent(ApiServerPodBinder::close);
        closeAndWait(vertx);
    }

    private static void closeAndWait(Vertx vertx) {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(VERTX_CLOSE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // The stop goes on: what Vert.x has not ended by then, the JVM's exit does.
        }
    }
}
