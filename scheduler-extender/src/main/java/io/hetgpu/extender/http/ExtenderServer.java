package io.hetgpu.extender.http;

import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.CacheGate;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.service.Preemption;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderBindingResult;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.WireNode;
import io.hetgpu.gpu.Quote;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front kube-scheduler talks to: {@code POST /filter}, {@code /prioritize}, {@code /preempt}, {@code /bind};
 * {@code GET /healthz}, {@code /readyz}, {@code /metrics}.
 *
 * <p>One HTTP server per event loop (as many as {@link ServerOptions#eventLoops()}, sharing the port) reads
 * requests. Probes never wait behind placement work: with all the work on the event loops, {@code /healthz} waited 0.4
 * to 2.1 s behind queued 5,000-node requests, past the kubelet's probe timeout. So where the probes come to the verbs'
 * port, only a filter or prioritize of a few hundred names is answered on the event loop that read it, and the others
 * run on a worker pool of one thread per core. With a metrics port, the probes come there, to a server on an event loop
 * of its own, and every filter and prioritize is answered on the verbs' event loop: the hand-off to the pool and back
 * (a system call to wake a thread each way) cost a tenth of a 5,000-name request, and more at the 99th percentile.
 * A filter that plans a whole job, preemption (which weighs the whole cluster) run on the pool whatever the ports;
 * binds, which wait on the API server, on a pool of their own.
 *
 * <p>What one caller can hold is bounded: bodies above the body limit are refused (413); bodies beyond the bytes
 * in flight are refused at once (429, Retry-After), before they are read, since kube-scheduler retries a failed
 * attempt; a body not complete within the read timeout has its connection closed; a connection idle past the
 * idle timeout is closed.
 *
 * <p>With {@link ServerOptions#metricsPort()} set, a second, plain-HTTP server answers {@code GET /metrics},
 * {@code /healthz} and {@code /readyz} and nothing else: kubelet and Prometheus reach it from other addresses while the
 * verbs' port listens on loopback only, or asks for a client certificate (mutual TLS) that probes do not carry.
 */
public final class ExtenderServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
    private static final String JSON = "application/json";

    private final ExtenderService service;
    private final Preemption preemption;
    private final PreemptionCodec preemptionCodec = new PreemptionCodec();
    private final BindVerb binding;
    private final BindingCodec bindingCodec = new BindingCodec();
    private final ExtenderMetrics metrics;
    private final ExtenderArgsReader reader;
    private final WireWriter writer = new WireWriter();
    private final Vertx vertx;
    private final ServerOptions options;
    private final BytesInFlight inFlight;
    private final WorkerExecutor verbs;
    /** Binds wait on the API server; on their own threads, they never hold back a filter or prioritize call. */
    private final WorkerExecutor binds;
    private final List<String> deployments = new CopyOnWriteArrayList<>();
    private volatile int port;
    private volatile int metricsPort = ServerOptions.NO_METRICS_PORT;
    /** The metrics port's event loop, apart from the verbs' (null without a metrics port). */
    private volatile Vertx probeLoop;

    /**
     * Binds at once: each spends most of its time on two or three API server round trips, so more of them than cores
     * keep kube-scheduler's asynchronous binding cycles from queueing (binds to one node still run one at a time).
     */
    static final int BIND_THREADS = 16;

    private ExtenderServer(Vertx vertx, ServerOptions options, ExtenderService service, Preemption preemption, BindVerb binding,
                           ExtenderMetrics metrics) {
        this.vertx = vertx;
        this.binding = binding;
        this.options = options;
        this.service = service;
        this.reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper(), service.resourceName());
        this.preemption = preemption;
        this.metrics = metrics;
        this.inFlight = new BytesInFlight(options.bytesInFlightLimit());
        this.verbs = vertx.createSharedWorkerExecutor("hetgpu-verbs-" + System.identityHashCode(this),
                Runtime.getRuntime().availableProcessors());
        this.binds = vertx.createSharedWorkerExecutor("hetgpu-binds-" + System.identityHashCode(this), BIND_THREADS);
        metrics.watchBytesInFlight(inFlight::taken);
    }

    /**
     * Listens on every event loop.
     *
     * @return fails with an {@link IllegalArgumentException} naming the files when TLS is on and the certificate
     *         and key cannot be read or do not match, so that a bad pair stops the start rather than every handshake
     */
    public static Future<ExtenderServer> start(Vertx vertx, ServerOptions options, ExtenderVerbs verbs, ExtenderMetrics metrics) {
        var httpOptions = withoutWebSockets(new HttpServerOptions()).setHost(options.host()).setPort(options.port())
                .setCompressionSupported(false).setMaxFormAttributeSize(-1)
                .setIdleTimeout((int) options.idleTimeout().toMillis()).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
        if (options.tls()) {
            try {
                httpOptions.setSsl(true).setKeyCertOptions(TlsKeyPair.check(vertx, options.tlsCert(), options.tlsKey()));
                if (options.mutualTls()) {
                    // A caller without a certificate from this CA is refused in the handshake: not one byte of HTTP reaches it.
                    httpOptions.setClientAuth(ClientAuth.REQUIRED).setTrustOptions(TlsKeyPair.checkClientCa(vertx, options.tlsClientCa()));
                }
            } catch (IllegalArgumentException e) {
                return Future.failedFuture(e);
            }
        }
        var extender = new ExtenderServer(vertx, options, verbs.service(), verbs.preemption(), verbs.binding(), metrics);
        extender.reader.prepare();
        int port;
        try {
            port = options.port() == 0 ? freePort(options.host()) : options.port();
        } catch (IOException e) {
            return Future.failedFuture(e);
        }
        extender.port = port;
        if (options.hasMetricsPort()) {
            // The probes' own event loop, guaranteed rather than hoped for from the shared pool's turn: the verbs' event
            // loops answer filter and prioritize calls themselves, and a probe must never queue behind one. Made here, on
            // the caller's thread: made on one of the verbs' event loops, Vert.x warns of a second instance.
            extender.probeLoop = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1).setInternalBlockingPoolSize(1));
        }
        return extender.deploy(httpOptions.setPort(port), options.eventLoops(), extender::router)
                .compose(verbsUp -> extender.probeLoop != null ? extender.deployMetricsPort() : Future.succeededFuture())
                .map(extender).recover(failure ->
                        extender.undeployAll().transform(undone -> Future.<ExtenderServer>failedFuture(failure)));
    }

    /**
     * One plain-HTTP server, without client authentication (kubelet's probes present no certificate): a few
     * probes and scrapes a minute need no more than one event loop, and one server may bind port 0 itself.
     */
    private Future<String> deployMetricsPort() {
        var httpOptions = withoutWebSockets(new HttpServerOptions()).setHost(options.metricsHost()).setPort(options.metricsPort())
                .setCompressionSupported(false)
                .setIdleTimeout((int) options.idleTimeout().toMillis()).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
        var loop = probeLoop;
        return loop.deployVerticle(new AbstractVerticle() {
            @Override
            public void start(Promise<Void> started) {
                vertx.createHttpServer(httpOptions).requestHandler(metricsRouter(loop)).listen()
                        .onSuccess(server -> metricsPort = server.actualPort()).<Void>mapEmpty().onComplete(started);
            }
        }).<String>mapEmpty().recover(failure -> Future.failedFuture(new IllegalStateException(
                "cannot listen on the metrics port " + options.metricsHost() + ":" + options.metricsPort() + ": " + failure.getMessage(), failure)));
    }

    /**
     * A port free now, for tests that ask for port 0: servers on several event loops share a port only when each
     * names it, and Vert.x binds each port 0 anew.
     */
    private static int freePort(String host) throws IOException {
        try (var socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }

    /** Deploys {@code instances} servers, each on an event loop of its own, all on {@code httpOptions}' port. */
    private Future<String> deploy(HttpServerOptions httpOptions, int instances, java.util.function.Supplier<Router> router) {
        return vertx.deployVerticle(() -> new AbstractVerticle() {
            @Override
            public void start(Promise<Void> started) {
                vertx.createHttpServer(httpOptions).requestHandler(router.get()).listen().<Void>mapEmpty().onComplete(started);
            }
        }, new DeploymentOptions().setInstances(instances)).onSuccess(deployments::add);
    }

    private Future<Void> undeployAll() {
        var undeployed = new ArrayList<Future<Void>>(deployments.stream().map(vertx::undeploy).toList());
        deployments.clear();
        verbs.close();
        binds.close();
        var loop = probeLoop;
        probeLoop = null;
        if (loop != null) {
            undeployed.add(loop.close());
        }
        return Future.join(undeployed).mapEmpty();
    }

    /**
     * Nothing here speaks WebSocket. Without WebSocket compression on offer, Vert.x puts no handler in each connection's
     * pipeline that looks at every request for an upgrade.
     */
    private static HttpServerOptions withoutWebSockets(HttpServerOptions options) {
        return options.setPerMessageWebSocketCompressionSupported(false).setPerFrameWebSocketCompressionSupported(false);
    }

    private Router router() {
        var router = Router.router(vertx);
        var body = new RequestBody(options.bodyLimitBytes());
        router.post("/filter").handler(this::admit).handler(body).handler(ctx -> work(ctx, "filter", this::filter,
                // A filter that plans a whole job weighs every node of the cluster for every pod of the job, for up to its
                // plan's budget: on the worker pool, so that the event loop goes on answering other pods meanwhile.
                request -> (options.hasMetricsPort() || small(request)) && plansNoJob(request)));
        // Prioritize scores the nodes it is given and plans nothing; a preemption weighs the whole cluster.
        router.post("/prioritize").handler(this::admit).handler(body).handler(ctx -> work(ctx, "prioritize", this::prioritize,
                request -> options.hasMetricsPort() || small(request)));
        router.post("/preempt").handler(this::admit).handler(body).handler(ctx -> work(ctx, "preempt", this::preempt, request -> false));
        router.post("/bind").handler(this::admit).handler(body).handler(ctx -> work(ctx, "bind", this::bind, binds));
        probes(router);
        // Whatever goes wrong before a verb's handler (no such path, wrong method, body too large) is
        // answered in JSON too: a person with curl and a kube-scheduler log both see why.
        for (int status : new int[] {400, 404, 405, 413, 415, 500}) {
            router.errorHandler(status, ctx -> reply(ctx, ctx.statusCode(), writer.error(refusal(ctx))));
        }
        return router;
    }

    /** The metrics port's routes: the probes and the scrape, and a 404 for anything else, the verbs' paths included. */
    private Router metricsRouter(Vertx loop) {
        var router = Router.router(loop);
        probes(router);
        for (int status : new int[] {404, 405, 500}) {
            router.errorHandler(status, ctx -> reply(ctx, ctx.statusCode(), writer.error(switch (ctx.statusCode()) {
                case 404 -> "no such path on the metrics port: " + ctx.request().method() + " " + ctx.request().path()
                        + "; it serves GET /healthz, /readyz, /metrics only (kube-scheduler's verbs are on port " + port + ")";
                default -> refusal(ctx);
            })));
        }
        return router;
    }

    private void probes(Router router) {
        // Live unless an informer has stopped for good (a restart mends that; an API server outage it would not). Ready once
        // the caches have synced: until then every verb refuses with the same reason.
        router.get("/healthz").handler(ctx -> probe(ctx, service.gate().wedged().orElse("")));
        router.get("/readyz").handler(ctx -> probe(ctx, service.gate().notReady().orElse("")));
        router.get("/metrics").handler(ctx -> ctx.response()
                .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape()));
    }

    private static void probe(RoutingContext ctx, String problem) {
        ctx.response().setStatusCode(problem.isEmpty() ? 200 : 503).end(problem.isEmpty() ? "ok" : problem);
    }

    /**
     * Takes the request's bytes from the bytes in flight before its body is read, or refuses it with 429; and
     * arms its read deadline. The bytes are given back when the answer is sent or the connection drops.
     */
    private void admit(RoutingContext ctx) {
        var request = ctx.request();
        long deadline = vertx.setTimer(options.readTimeout().toMillis(), id -> {
            if (!request.isEnded()) {
                LOG.warn("{} {} from {}: body not complete after {} s; closing the connection", request.method(), Quote.escaped(request.path()),
                        request.remoteAddress(), options.readTimeout().toSeconds());
                request.connection().close();
            }
        });
        long declared = contentLength(request);
        // Without a Content-Length (chunked; kube-scheduler always sends one) the body may grow to the limit.
        long bytes = declared < 0 ? options.bodyLimitBytes() : Math.min(declared, options.bodyLimitBytes());
        if (!inFlight.tryTake(bytes)) {
            ctx.addEndHandler(done -> vertx.cancelTimer(deadline));
            metrics.refused(request.path().substring(1));
            // The body is read and dropped, so the connection stays usable and the caller reads the 429 whole.
            request.handler(ignored -> { });
            ctx.response().putHeader("Retry-After", "1");
            reply(ctx, 429, writer.error(request.method() + " " + request.path() + ": the extender is busy: " + inFlight.taken()
                    + " bytes of requests in flight and this one's " + bytes + " would pass its limit of " + inFlight.limit() + "; retry"));
            return;
        }
        ctx.addEndHandler(done -> {
            inFlight.give(bytes);
            vertx.cancelTimer(deadline);
        });
        ctx.next();
    }

    static long contentLength(HttpServerRequest request) {
        var header = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (header == null) {
            return -1;
        }
        try {
            return Math.max(-1, Long.parseLong(header.trim()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Where probes come to the verbs' port, the largest filter or prioritize body answered on the event loop itself: a
     * pod and up to a few hundred node names, some tens of microseconds of work. Handing such a request to the worker
     * pool and the answer back costs more than the work (the event loop is woken by a system call each way); a larger one
     * goes to the pool, so that a probe on the same event loop never waits behind more than that.
     */
    static final int INLINE_BODY_BYTES = 16 * 1024;

    /**
     * The largest answer after which the event loop polls for the caller's next call (about 1,000 node names): a caller
     * reading a larger answer comes back after the poll's window, and polling then only takes a core from it.
     */
    static final int POLL_AFTER_ANSWER_BYTES = 32 * 1024;

    /**
     * After a small answer, kube-scheduler's next call may follow within microseconds: the prioritize of the same pod
     * once its score plugins have run, the next pod's filter once its filter plugins have (binding runs apart). The
     * event loop polls for it before it sleeps.
     */
    private static void expectNextCall(Answer answer) {
        if (answer.body().length() <= POLL_AFTER_ANSWER_BYTES) {
            PollingEventLoops.expectBytes();
        }
    }

    private static boolean small(RoutingContext ctx) {
        return RequestBody.of(ctx).length <= INLINE_BODY_BYTES;
    }

    /**
     * Runs a verb and answers: on the event loop that read it where {@code inline} says so, else on the worker pool (the
     * answer written from the event loop either way).
     */
    private void work(RoutingContext ctx, String verb, Function<RoutingContext, Answer> answer, Predicate<RoutingContext> inline) {
        if (inline.test(ctx)) {
            var sample = metrics.start();
            Answer result;
            try {
                result = answer.apply(ctx);
            } catch (RuntimeException e) {
                result = new Answer(400, writer.error("hetgpu extender internal error: " + e));
            }
            reply(ctx, result.status(), result.body());
            expectNextCall(result);
            metrics.record(sample, verb, result.status());
            return;
        }
        work(ctx, verb, answer, verbs);
    }

    /** Whether a filter plans no job: planning one weighs every node of the cluster, whatever the request names. */
    private boolean plansNoJob(RoutingContext ctx) {
        try {
            return !service.jobs().wouldPlan(args(ctx).pod());
        } catch (WireFormatException e) {
            // Answered at once, with the reason.
            return true;
        }
    }

    private void work(RoutingContext ctx, String verb, Function<RoutingContext, Answer> answer, WorkerExecutor pool) {
        var sample = metrics.start();
        pool.executeBlocking(() -> answer.apply(ctx), false).onComplete(done -> {
            var result = done.succeeded() ? done.result()
                    : new Answer(400, writer.error("hetgpu extender internal error: " + done.cause()));
            reply(ctx, result.status(), result.body());
            expectNextCall(result);
            metrics.record(sample, verb, result.status());
        });
    }

    private record Answer(int status, Buffer body) {
    }

    /** A verb's work on a request body it may find unreadable. */
    @FunctionalInterface
    private interface VerbWork {
        Answer run() throws WireFormatException;
    }

    public int port() {
        return port;
    }

    /** The metrics port as bound (the free port picked when 0 was asked), or {@link ServerOptions#NO_METRICS_PORT}. */
    public int metricsPort() {
        return metricsPort;
    }

    private Answer filter(RoutingContext ctx) {
        int status = 200;
        Buffer body;
        try {
            body = writer.filterResult(service.filter(args(ctx)));
        } catch (WireFormatException e) {
            status = 400;
            body = writer.filterResult(FilterResult.error(e.getMessage()));
        } catch (RuntimeException e) {
            // A bug must not take the scheduler's filter down with a 500 and no word on why.
            LOG.error("filter failed", e);
            body = writer.filterResult(FilterResult.error("hetgpu extender internal error: " + e));
        }
        return new Answer(status, body);
    }

    private Answer prioritize(RoutingContext ctx) {
        return answeredOrRefused("prioritize", () -> {
            var result = service.prioritize(args(ctx));
            // The answer is a bare array with no room for an Error; a 400 is how kube-scheduler hears "failed".
            return result.error().isEmpty() ? new Answer(200, writer.hostPriorities(result.priorities()))
                    : new Answer(400, writer.error(result.error()));
        });
    }

    private Answer preempt(RoutingContext ctx) {
        return answeredOrRefused("preempt",
                () -> new Answer(200, Buffer.buffer(preemptionCodec.write(preemption.answer(preemptionCodec.read(bytes(ctx)))))));
    }

    /**
     * A verb whose failures are answered with a bare {@code {"Error": ...}}: a body it cannot read and a bug are a 400 with
     * the reason, caches not synced yet a 503.
     */
    private Answer answeredOrRefused(String verb, VerbWork answer) {
        try {
            return answer.run();
        } catch (WireFormatException e) {
            return new Answer(400, writer.error(e.getMessage()));
        } catch (CacheGate.NotSynced e) {
            return new Answer(503, writer.error(e.getMessage()));
        } catch (RuntimeException e) {
            LOG.error(verb + " failed", e);
            return new Answer(400, writer.error("hetgpu extender internal error: " + e));
        }
    }

    /**
     * kube-scheduler reads an {@code Error} from a 200 answer as well as from any other status; a body it cannot read is
     * a 400 with the reason, as for the other verbs.
     */
    private Answer bind(RoutingContext ctx) {
        int status = 200;
        Buffer body;
        try {
            body = Buffer.buffer(bindingCodec.write(binding.bind(bindingCodec.read(bytes(ctx)))));
        } catch (WireFormatException e) {
            status = 400;
            body = Buffer.buffer(bindingCodec.write(new ExtenderBindingResult(e.getMessage())));
        } catch (RuntimeException e) {
            LOG.error("bind failed", e);
            body = Buffer.buffer(bindingCodec.write(new ExtenderBindingResult("hetgpu extender internal error: " + e)));
        }
        return new Answer(status, body);
    }

    private static String refusal(RoutingContext ctx) {
        var request = ctx.request().method() + " " + ctx.request().path();
        return switch (ctx.statusCode()) {
            case 404 -> "no such path: " + request + "; the extender serves POST /filter, /prioritize, /preempt, /bind and GET /healthz, /readyz, /metrics";
            case 405 -> request + ": method not allowed; kube-scheduler POSTs to /filter, /prioritize, /preempt and /bind";
            case 413 -> request + ": the body is larger than the extender's body limit";
            default -> request + ": " + (ctx.failure() == null ? "HTTP " + ctx.statusCode() : ctx.failure().getMessage());
        };
    }

    /** The request's ExtenderArgs; without a Pod there is nothing to place, so the request itself is wrong (400), in every verb. */
    private ExtenderArgs args(RoutingContext ctx) throws WireFormatException {
        // Read once per request: a small filter is read to decide where it runs, then answered from the same reading.
        ExtenderArgs read = ctx.get(READ_ARGS);
        if (read != null) {
            return read;
        }
        var args = reader.read(bytes(ctx));
        if (args.pod() == null) {
            throw new WireFormatException(ExtenderService.NULL_POD);
        }
        ctx.put(READ_ARGS, args);
        return args;
    }

    /** The routing context's key for the request's ExtenderArgs once read. */
    private static final String READ_ARGS = "hetgpu.args";

    private static byte[] bytes(RoutingContext ctx) {
        return RequestBody.of(ctx);
    }

    /**
     * Sends an answer, and says so once when it cannot be sent (the caller hung up, or timed out first and closed the
     * connection): kube-scheduler then logs only its side, and without this line the extender's log had nothing to
     * match it with.
     */
    private void reply(RoutingContext ctx, int status, Buffer body) {
        var response = ctx.response();
        Future<Void> sent;
        try {
            sent = response.setStatusCode(status).putHeader("content-type", JSON).end(body);
        } catch (IllegalStateException e) {
            // A response Vert.x already closed with its connection refuses headers at once rather than failing the future.
            sent = Future.failedFuture(e);
        }
        sent.onFailure(cause -> {
            var request = ctx.request();
            var verb = verb(request.path());
            metrics.answerFailed(verb);
            LOG.warn("{} ({} {}): the answer of {} bytes (HTTP {}) could not be written to {}: {}", verb, request.method(), Quote.escaped(request.path()),
                    body.length(), status, request.remoteAddress(), cause.toString());
        });
    }

    /** The verb a path names, or "other": what the metrics are tagged with, so that odd paths add no series. */
    static String verb(String path) {
        return switch (path) {
            case "/filter", "/prioritize", "/preempt", "/bind" -> path.substring(1);
            default -> "other";
        };
    }

    @Override
    public void close() {
        undeployAll().toCompletionStage().toCompletableFuture().join();
    }
}
