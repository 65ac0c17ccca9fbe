package io.hetgpu.extender.bench;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The benchmark's side of the wire: one kept-alive connection per target and one request at a time, as kube-scheduler's
 * Go client holds one to its extender. Netty's client, because the JDK's own ({@code java.net.http}) spends about 0.1 ms
 * of its own on each request (a selector thread, an executor and futures between the caller and the socket): at 100
 * nodes that is a third of what it measured, the same for both targets, so it pulled every ratio towards 1.
 */
final class BenchClient implements AutoCloseable {

    private final Vertx vertx = Vertx.vertx();
    private final HttpClient http = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setConnectTimeout(5_000),
            new PoolOptions().setHttp1MaxSize(1));
    /**
     * Where every request is made and answered. Called from a thread outside Vert.x, the client makes each request on a
     * context of its own, on whichever event loop comes next, while the kept-alive connection reads on its own loop: now
     * and then the answer's body arrived before its handler was set and was lost, a 200 read as empty (7 to 13 in 8,000
     * filters; a Python client on the same server, none).
     */
    private final Context context = vertx.getOrCreateContext();

    /** The answer's body; an answer other than 200 is an error that quotes it. */
    byte[] post(int port, String path, Buffer body) throws Exception {
        var answer = new CompletableFuture<byte[]>();
        context.runOnContext(onLoop -> http.request(HttpMethod.POST, port, "127.0.0.1", path)
                .compose(request -> request.putHeader("Content-Type", "application/json").send(body))
                .compose(response -> response.body().map(bytes -> check(port, path, response, bytes)))
                .onComplete(done -> {
                    if (done.succeeded()) {
                        answer.complete(done.result());
                    } else {
                        answer.completeExceptionally(done.cause());
                    }
                }));
        try {
            return answer.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** Whether {@code GET path} answers 200. */
    boolean ok(int port, String path) throws InterruptedException, TimeoutException {
        var answer = new CompletableFuture<Boolean>();
        context.runOnContext(onLoop -> http.request(HttpMethod.GET, port, "127.0.0.1", path).compose(request -> request.send())
                .onComplete(done -> answer.complete(done.succeeded() && done.result().statusCode() == 200)));
        try {
            return answer.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return false;
        }
    }

    private static byte[] check(int port, String path, HttpClientResponse response, Buffer body) {
        if (response.statusCode() != 200 || body.length() == 0) {
            throw new IllegalStateException(path + " on port " + port + " answered " + response.statusCode() + " (Content-Length "
                    + response.getHeader("Content-Length") + ", " + body.length() + " bytes read): " + body.getString(0, Math.min(300, body.length())));
        }
        return body.getBytes();
    }

    @Override
    public void close() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
