package io.hetgpu.deviceplugin.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.discovery.HealthChange;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The DaemonSet's liveness probe and the Prometheus scrape, over HTTP as kubelet and Prometheus call them. */
class StatusServerTest {

    private final AtomicBoolean registered = new AtomicBoolean();
    private final GpuInventory inventory = new GpuInventory(Fixtures.dgx1V100());
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final PluginMetrics metrics = new PluginMetrics(registry, inventory);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private StatusServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StatusServer(0, registry, registered::get);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void healthzFollowsTheRegistrationWithKubelet() throws Exception {
        var before = get("/healthz");
        assertThat(before.statusCode()).isEqualTo(503);
        assertThat(before.body()).contains("not registered with kubelet");

        registered.set(true);
        var after = get("/healthz");
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.body()).isEqualTo("ok\n");

        // kubelet restarts: the plugin is unregistered until it registers again, and says so.
        registered.set(false);
        assertThat(get("/healthz").statusCode()).isEqualTo(503);
    }

    @Test
    void metricsAreThePrometheusTextTheReadmeNames() throws Exception {
        metrics.registered();
        metrics.allocated(2);
        metrics.allocationRefused();
        var unhealthy = inventory.topology().devices().get(3).uuid();
        inventory.apply(new HealthChange(unhealthy, DeviceHealth.UNHEALTHY, "XID 79"));

        var response = get("/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        assertThat(response.body())
                .contains("hetgpu_device_plugin_devices 8.0")
                .contains("hetgpu_device_plugin_unhealthy_devices 1.0")
                .contains("hetgpu_device_plugin_registrations_total 1.0")
                .contains("hetgpu_device_plugin_allocated_devices_total 2.0")
                .contains("hetgpu_device_plugin_allocation_refusals_total 1.0")
                .contains("hetgpu_device_plugin_preferred_allocation_seconds_count 0");
    }

    @Test
    void healthzIsAnsweredWhileClientsHoldHalfSentRequests() throws Exception {
        registered.set(true);
        var holders = new ArrayList<Socket>();
        try {
            for (int i = 0; i < StatusServer.THREADS - 1; i++) {
                holders.add(halfSentRequest(server.port()));
            }

            // A bounded wait, not a measurement: the probe's own timeout is 1 s.
            var response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/healthz"))
                    .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
        } finally {
            for (var holder : holders) {
                holder.close();
            }
        }
    }

    @Test
    void aStalledRequestIsCutOffAtTheDeadlineSoStalledClientsCannotTakeEveryThread() throws Exception {
        registered.set(true);
        try (var strict = new StatusServer(0, registry, registered::get, Duration.ofMillis(200))) {
            var holders = new ArrayList<Socket>();
            try {
                for (int i = 0; i < StatusServer.THREADS * 2; i++) {
                    holders.add(halfSentRequest(strict.port()));
                }
                for (var holder : holders) {
                    assertThat(closedByServer(holder)).as("stalled connection closed by the server").isTrue();
                }
            } finally {
                for (var holder : holders) {
                    holder.close();
                }
            }

            var response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + strict.port() + "/healthz"))
                    .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
        }
    }

    /** A client that sends a request line and one header, then nothing more (no blank line ending the head). */
    private static Socket halfSentRequest(int port) throws IOException {
        var socket = new Socket("127.0.0.1", port);
        var out = socket.getOutputStream();
        out.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return socket;
    }

    /** Whether the server ends the connection; a server that never does fails the read's 10 s bound instead. */
    private static boolean closedByServer(Socket socket) throws IOException {
        socket.setSoTimeout(10_000);
        try {
            return socket.getInputStream().read() == -1;
        } catch (SocketException reset) {
            return true;
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
