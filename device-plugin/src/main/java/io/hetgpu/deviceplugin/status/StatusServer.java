package io.hetgpu.deviceplugin.status;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * {@code /healthz} (200 while the plugin is registered with kubelet, 503 otherwise, for the DaemonSet's
 * liveness probe) and {@code /metrics} (Prometheus text) on the JDK's own HTTP server. Exchanges run on
 * a small pool with a deadline each ({@link ExchangePool}), so a client that stalls mid-request holds
 * one thread for a few seconds at most and never keeps the probe from being answered.
 */
public final class StatusServer implements AutoCloseable {

    /** Longer than any answer here takes; a request not read and answered by then is a stalled client. */
    static final Duration EXCHANGE_DEADLINE = Duration.ofSeconds(5);
    static final int THREADS = 4;
    private static final int QUEUE = 16;

    private final HttpServer server;
    private final ExchangePool exchanges;

    public StatusServer(int port, PrometheusMeterRegistry registry, BooleanSupplier healthy) throws IOException {
        this(port, registry, healthy, EXCHANGE_DEADLINE);
    }

    StatusServer(int port, PrometheusMeterRegistry registry, BooleanSupplier healthy, Duration exchangeDeadline) throws IOException {
        server = HttpServer.create(new InetSocketAddress(port), 0);
        exchanges = new ExchangePool(THREADS, QUEUE, exchangeDeadline);
        server.setExecutor(exchanges);
        server.createContext("/healthz", exchange -> {
            boolean ok = healthy.getAsBoolean();
            reply(exchange, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "not registered with kubelet\n");
        });
        server.createContext("/metrics", exchange ->
                reply(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void reply(HttpExchange exchange, int status, String type, String body) throws IOException {
        var bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (var out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        exchanges.close();
    }
}
