package io.hetgpu.extender;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.InformerClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.explain.PlacementEvents;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One running scheduler extender: configuration, cluster state (informers when an API client is
 * given, the request alone otherwise), policy and HTTP server, wired once. The command line and the
 * test cluster both start it here, so the test cluster runs the very same wiring.
 */
public final class Extender implements AutoCloseable {

    /** Events waiting for the API server; one a minute per pending pod is plenty for a cluster's worth. */
    private static final int EVENT_QUEUE = 1024;

    private final Vertx vertx;
    private final ExtenderServer server;
    private final Optional<InformerClusterView> informers;
    private final CompletableFuture<Void> synced;
    private final Optional<ExecutorService> eventWriter;

    private Extender(Vertx vertx, ExtenderServer server, Optional<InformerClusterView> informers, CompletableFuture<Void> synced,
                     Optional<ExecutorService> eventWriter) {
        this.vertx = vertx;
        this.server = server;
        this.informers = informers;
        this.synced = synced;
        this.eventWriter = eventWriter;
    }

    /**
     * Starts listening. Informers start in the background: until they have synced, {@code /readyz}
     * answers 503 and {@link #synced()} is incomplete.
     *
     * @throws IllegalStateException when the port cannot be bound, with the reason
     */
    public static Extender start(ExtenderConfig settings, ServerOptions options, Optional<KubernetesClient> client) {
        var catalog = CardCatalog.defaults().withOverrides(settings.tiers());
        var parser = new PodRequestParser(settings.resourceName(), catalog, settings.policy().throughputs().table().keySet());
        ClusterView cluster = ClusterView.REQUEST_ONLY;
        Optional<InformerClusterView> informers = Optional.empty();
        Optional<ExecutorService> eventWriter = Optional.empty();
        var synced = CompletableFuture.<Void>completedFuture(null);
        var listener = PlacementEvents.logOnly();
        java.util.function.Consumer<io.hetgpu.extender.service.PreemptionAdvice> preemptionListener = PlacementEvents::logPreemption;
        if (client.isPresent()) {
            var view = new InformerClusterView(client.get(), parser, settings.rackLabel());
            synced = view.start();
            informers = Optional.of(view);
            cluster = view;
            if (settings.events()) {
                // A bounded queue: while the API server is slow, newer advice is dropped rather than queued without end.
                var writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(EVENT_QUEUE),
                        Thread.ofPlatform().daemon().name("events").factory(), new ThreadPoolExecutor.DiscardPolicy());
                eventWriter = Optional.of(writer);
                var placementEvents = new PlacementEvents(client.get(), Clock.systemUTC(), Duration.ofSeconds(settings.eventIntervalSeconds()),
                        writer, pod -> isKnown(view.podByUid(pod.uid()), pod), view::podByUid);
                listener = placementEvents;
                preemptionListener = placementEvents::preemption;
            }
        }
        var metrics = new ExtenderMetrics();
        var events = listener;
        var preemptionEvents = preemptionListener;
        var nodeStates = new NodeStateFactory(catalog, settings.rackLabel(), settings.resourceName());
        var policy = new PlacementPolicy(settings.policy());
        // Without an API server the bind verb refuses every call, saying why: kube-scheduler then binds nothing.
        var binder = client.<io.hetgpu.extender.cluster.PodBinder>map(io.hetgpu.extender.cluster.ApiServerPodBinder::new)
                .orElse(io.hetgpu.extender.cluster.PodBinder.NONE);
        var verbs = ExtenderVerbs.of(cluster, parser, nodeStates, policy, (pod, table) -> {
            metrics.placed(pod, table);
            events.accept(pod, table);
        }, advice -> {
            metrics.preemption(advice);
            preemptionEvents.accept(advice);
        }, binder, metrics::bound);
        var service = verbs.service();
        metrics.watchNodes(nodeStates);
        if (settings.reserve().isOn()) {
            metrics.watchReserve(service);
        }
        var vertx = Vertx.vertx();
        try {
            var server = ExtenderServer.start(vertx, options, verbs, metrics)
                    .toCompletionStage().toCompletableFuture().join();
            return new Extender(vertx, server, informers, synced, eventWriter);
        } catch (RuntimeException e) {
            informers.ifPresent(InformerClusterView::close);
            eventWriter.ifPresent(ExecutorService::shutdownNow);
            vertx.close();
            var cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof IllegalArgumentException) {
                // A TLS certificate and key that cannot be used: the message names the files.
                throw new IllegalStateException(cause.getMessage(), cause);
            }
            throw new IllegalStateException("cannot listen on " + options.host() + ":" + options.port() + ": "
                    + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()), e);
        }
    }

    private static boolean isKnown(Pod known, PodRequest pod) {
        return known != null && pod.namespace().equals(known.getMetadata().getNamespace()) && pod.name().equals(known.getMetadata().getName());
    }

    public int port() {
        return server.port();
    }

    /**
     * The nodes and bound pods as this extender's informers see them now (empty without an API server):
     * for tools and tests that must wait until it has seen a change the API server already holds.
     */
    public NodeSnapshot view() {
        return informers.map(InformerClusterView::nodes).orElse(NodeSnapshot.EMPTY);
    }

    /** Completes when the informers have synced (at once without an API server); fails when they cannot start. */
    public CompletableFuture<Void> synced() {
        return synced;
    }

    @Override
    public void close() {
        server.close();
        informers.ifPresent(InformerClusterView::close);
        eventWriter.ifPresent(ExecutorService::shutdownNow);
        vertx.close();
    }
}
