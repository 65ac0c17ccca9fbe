package io.hetgpu.extender.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front kube-scheduler talks to: {@code POST /filter}, {@code /prioritize}, {@code /preempt};
 * {@code GET /healthz}, {@code /readyz}, {@code /metrics}. Filter and prioritize run on the event loop:
 * they are pure computation of a millisecond or so per thousand nodes, kube-scheduler sends one at a
 * time, and handing each to a worker thread cost more than the work itself (the benchmark's 100-node
 * case went from 0.84 to 0.65 ms per filter+prioritize). Preempt, rarer and heavier, runs on a worker.
 */
public final class ExtenderServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
    private static final String JSON = "application/json";

    private final ExtenderService service;
    private final Preemption preemption;
    private final ExtenderMetrics metrics;
    private final ExtenderArgsReader reader;
    private final WireWriter writer = new WireWriter();
    private HttpServer server;

    private ExtenderServer(ExtenderService service, Preemption preemption, ExtenderMetrics metrics) {
        this.service = service;
        this.reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper(), service.parser().resourceName());
        this.preemption = preemption;
        this.metrics = metrics;
    }

    public static Future<ExtenderServer> start(Vertx vertx, ServerOptions options, ExtenderService service,
                                               Preemption preemption, ExtenderMetrics metrics) {
        var extender = new ExtenderServer(service, preemption, metrics);
        var router = Router.router(vertx);
        var bodyLimit = BodyHandler.create(false).setBodyLimit(options.bodyLimitBytes());
        // kube-scheduler speaks JSON only. Whatever Content-Type a request names (a form, text, none), its
        // body is read as JSON: dropping the header keeps the body handler from decoding a form instead.
        Handler<RoutingContext> body = ctx -> {
            ctx.request().headers().remove(HttpHeaders.CONTENT_TYPE);
            bodyLimit.handle(ctx);
        };
        router.post("/filter").handler(body).handler(extender::filter);
        router.post("/prioritize").handler(body).handler(extender::prioritize);
        router.post("/preempt").handler(body).blockingHandler(extender::preempt, false);
        router.get("/healthz").handler(ctx -> ctx.response().end("ok"));
        router.get("/readyz").handler(ctx -> {
            boolean ready = service.cluster().synced();
            ctx.response().setStatusCode(ready ? 200 : 503).end(ready ? "ok" : "informers not synced yet");
        });
        router.get("/metrics").handler(ctx -> ctx.response()
                .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape()));
        // Whatever goes wrong before a verb's handler (no such path, wrong method, body too large) is
        // answered in JSON too: a person with curl and a kube-scheduler log both see why.
        for (int status : new int[] {400, 404, 405, 413, 415, 500}) {
            router.errorHandler(status, ctx -> reply(ctx, ctx.statusCode(), extender.writer.error(refusal(ctx))));
        }

        var httpOptions = new HttpServerOptions().setHost(options.host()).setPort(options.port())
                .setCompressionSupported(false).setMaxFormAttributeSize(-1);
        if (options.tls()) {
            httpOptions.setSsl(true).setKeyCertOptions(new PemKeyCertOptions()
                    .setCertPath(options.tlsCert().toString()).setKeyPath(options.tlsKey().toString()));
        }
        return vertx.createHttpServer(httpOptions).requestHandler(router).listen().map(server -> {
            extender.server = server;
            return extender;
        });
    }

    public int port() {
        return server.actualPort();
    }

    private void filter(RoutingContext ctx) {
        var sample = metrics.start();
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
        reply(ctx, status, body);
        metrics.record(sample, "filter", status);
    }

    private void prioritize(RoutingContext ctx) {
        var sample = metrics.start();
        int status = 200;
        Buffer body;
        try {
            var result = service.prioritize(args(ctx));
            if (result.error().isEmpty()) {
                body = writer.hostPriorities(result.priorities());
            } else {
                // The answer is a bare array with no room for an Error; a 400 is how kube-scheduler hears "failed".
                status = 400;
                body = writer.error(result.error());
            }
        } catch (WireFormatException e) {
            status = 400;
            body = writer.error(e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("prioritize failed", e);
            status = 400;
            body = writer.error("hetgpu extender internal error: " + e);
        }
        reply(ctx, status, body);
        metrics.record(sample, "prioritize", status);
    }

    private void preempt(RoutingContext ctx) {
        var sample = metrics.start();
        int status = 200;
        Buffer body;
        try {
            body = Buffer.buffer(preemption.answer(bytes(ctx)));
        } catch (WireFormatException e) {
            status = 400;
            body = writer.error(e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("preempt failed", e);
            status = 400;
            body = writer.error("hetgpu extender internal error: " + e);
        }
        reply(ctx, status, body);
        metrics.record(sample, "preempt", status);
    }

    private static String refusal(RoutingContext ctx) {
        var request = ctx.request().method() + " " + ctx.request().path();
        return switch (ctx.statusCode()) {
            case 404 -> "no such path: " + request + "; the extender serves POST /filter, /prioritize, /preempt and GET /healthz, /readyz, /metrics";
            case 405 -> request + ": method not allowed; kube-scheduler POSTs to /filter, /prioritize and /preempt";
            case 413 -> request + ": the body is larger than the extender's body limit";
            default -> request + ": " + (ctx.failure() == null ? "HTTP " + ctx.statusCode() : ctx.failure().getMessage());
        };
    }

    /** The request's ExtenderArgs; without a Pod there is nothing to place, so the request itself is wrong (400), in every verb. */
    private ExtenderArgs args(RoutingContext ctx) throws WireFormatException {
        var args = reader.read(bytes(ctx));
        if (args.pod() == null) {
            throw new WireFormatException(ExtenderService.NULL_POD);
        }
        return args;
    }

    private static byte[] bytes(RoutingContext ctx) {
        var body = ctx.body().buffer();
        return body == null ? new byte[0] : body.getBytes();
    }

    private static void reply(RoutingContext ctx, int status, Buffer body) {
        ctx.response().setStatusCode(status).putHeader("content-type", JSON).end(body);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close().toCompletionStage().toCompletableFuture().join();
        }
    }
}
