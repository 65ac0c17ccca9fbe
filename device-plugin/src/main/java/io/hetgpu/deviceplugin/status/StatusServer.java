package io.hetgpu.deviceplugin.status;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * {@code /healthz} (200 while the plugin is registered with kubelet, 503 otherwise, for the DaemonSet's
 * liveness probe) and {@code /metrics} (Prometheus text) on the JDK's own HTTP server.
 */
public final class StatusServer implements AutoCloseable {

    private final HttpServer server;

    public StatusServer(int port, PrometheusMeterRegistry registry, BooleanSupplier healthy) throws IOException {
        server = HttpServer.create(new InetSocketAddress(port), 0);
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
    }
}
