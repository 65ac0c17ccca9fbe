package io.hetgpu.extender.http;

import io.hetgpu.extender.RequestOnlyVerbs;
import static io.hetgpu.extender.http.ExtenderServerTest.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hetgpu.extender.KubeJson;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two ports: the verbs' port for kube-scheduler (optionally requiring a client certificate), and the metrics port
 * that serves only what kubelet and Prometheus need.
 */
class ExtenderServerPortsTest {

    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String CPU = KubeJson.text("node-cpu.json");
    private static final String FILTER = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + CPU + "]}}";
    private static final String BIND = "{\"PodName\":\"train-0\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"dgx-1\"}";

    private static final String FILTERED_ONCE = "hetgpu_extender_requests_seconds_count{status=\"200\",verb=\"filter\"} 1";

    @TempDir
    Path dir;

    private Vertx vertx;
    private WebClient client;
    private final java.util.List<ExtenderServer> servers = new java.util.ArrayList<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() {
        servers.forEach(ExtenderServer::close);
        join(vertx.close());
    }

    private ExtenderServer startServer(ServerOptions options) {
        var verbs = RequestOnlyVerbs.create();
        var server = join(ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics()));
        servers.add(server);
        return server;
    }

    private static ServerOptions plain() {
        return new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null);
    }

    @Test
    void theMetricsPortServesProbesAndMetricsOnlyAndTheVerbsPortStillServesEverything() {
        var server = startServer(plain().withMetrics("127.0.0.1", 0));
        int metrics = server.metricsPort();
        assertThat(metrics).isPositive().isNotEqualTo(server.port());

        assertThat(post(server.port(), "/filter", FILTER).statusCode()).isEqualTo(200);
        assertThat(get(metrics, "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(metrics, "/readyz").statusCode()).isEqualTo(200);
        // The same registry as the verbs' port: the filter call just made is counted there (once answered).
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var scrape = get(metrics, "/metrics");
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.bodyAsString()).contains(FILTERED_ONCE);
        });

        for (var path : new String[] {"/filter", "/prioritize", "/preempt", "/bind", "/anything"}) {
            var refused = post(metrics, path, path.equals("/bind") ? BIND : FILTER);
            assertThat(refused.statusCode()).as(path).isEqualTo(404);
            assertThat(refused.bodyAsString()).as(path).contains("no such path on the metrics port: POST " + path,
                    "port " + server.port());
        }
        // None of them reached a verb: the only verb call counted is the one made on the verbs' port.
        assertThat(get(metrics, "/metrics").bodyAsString()).doesNotContain("verb=\"bind\"", "verb=\"prioritize\"", "verb=\"preempt\"")
                .contains(FILTERED_ONCE);

        // The verbs' port keeps its probes and metrics, as the manifests and existing callers use them.
        assertThat(get(server.port(), "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(server.port(), "/metrics").statusCode()).isEqualTo(200);
    }

    @Test
    void withoutAMetricsPortThereIsNone() {
        assertThat(startServer(plain()).metricsPort()).isEqualTo(ServerOptions.NO_METRICS_PORT);
    }

    @Test
    void aMetricsPortThatIsTakenFailsTheStartNamingIt() throws IOException {
        try (var taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            var options = plain().withMetrics("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> startServer(options)).isInstanceOf(CompletionException.class).cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("cannot listen on the metrics port 127.0.0.1:" + taken.getLocalPort() + ": ");
        }
    }

    @Test
    void mutualTlsAnswersACallerWithAClientCertificateFromTheCa() throws IOException {
        var ca = TestAuthority.create(dir, "hetgpu-ca");
        var server = startMutualTls(ca);

        var answer = call(ca.clientContext(ca.client("kube-scheduler")), server.port(), "/filter", FILTER);

        assertThat(answer).startsWith("HTTP/1.1 200 OK").contains("\"FailedAndUnresolvableNodes\":{\"cpu-12\"");
    }

    @Test
    void mutualTlsRefusesACallerWithoutACertificateInTheHandshake() {
        var ca = TestAuthority.create(dir, "hetgpu-ca");
        var server = startMutualTls(ca);

        assertThatThrownBy(() -> handshake(ca.clientContext(null), server.port())).isInstanceOf(SSLException.class)
                .hasMessageContaining("certificate_required");
    }

    @Test
    void mutualTlsRefusesACertificateFromAnotherCaInTheHandshake() {
        var ca = TestAuthority.create(dir, "hetgpu-ca");
        var other = TestAuthority.create(dir, "someone-else");
        var server = startMutualTls(ca);

        // The caller trusts the extender's server certificate; only its own certificate is from the wrong CA.
        var stranger = other.client("kube-scheduler");
        assertThatThrownBy(() -> handshake(ca.clientContext(stranger), server.port())).isInstanceOf(SSLException.class);
    }

    @Test
    void withMutualTlsTheMetricsPortStaysPlainHttpForProbes() {
        var ca = TestAuthority.create(dir, "hetgpu-ca");
        var server = startServer(mutualTls(ca).withMetrics("127.0.0.1", 0));

        assertThat(get(server.metricsPort(), "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(server.metricsPort(), "/metrics").statusCode()).isEqualTo(200);
        assertThat(post(server.metricsPort(), "/bind", BIND).statusCode()).isEqualTo(404);
    }

    @Test
    void aClientCaFileWithoutACertificateFailsTheStartNamingIt() throws IOException {
        var ca = TestAuthority.create(dir, "hetgpu-ca");
        var empty = Files.writeString(dir.resolve("empty-ca.pem"), "not a certificate\n");
        var options = mutualTls(ca).withTlsClientCa(empty);

        assertThatThrownBy(() -> startServer(options)).cause().isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("TLS client CA " + empty);
    }

    @Test
    void aClientCaNeedsAServerCertificate() {
        assertThatThrownBy(() -> plain().withTlsClientCa(dir.resolve("ca.pem"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("tlsClientCa (" + dir.resolve("ca.pem") + ") needs tlsCert and tlsKey");
    }

    private ExtenderServer startMutualTls(TestAuthority ca) {
        return startServer(mutualTls(ca));
    }

    private static ServerOptions mutualTls(TestAuthority ca) {
        var serverCertificate = ca.server("hetgpu-scheduler-extender");
        return new ServerOptions("127.0.0.1", 0, 1024 * 1024, serverCertificate.certificatePem(), serverCertificate.keyPem())
                .withTlsClientCa(ca.certificatePem());
    }

    /**
     * One request over TLS, as a plain socket sends it: the handshake, the request, and all the answer's bytes.
     *
     * @throws SSLException when the handshake fails (see {@link #handshake})
     */
    private static String call(SSLContext context, int port, String path, String body) throws IOException {
        try (var socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            var bytes = body.getBytes(StandardCharsets.UTF_8);
            var out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + bytes.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * A handshake, and then a read of whatever the server sends first, without writing: how a caller learns that the
     * server refused its certificate. Under TLS 1.3 the client has finished its side of the handshake before the server
     * judges the client's certificate, so the refusal arrives as an alert on the first read (under TLS 1.2,
     * {@code startHandshake} throws). A request written meanwhile can meet the closed connection first (a broken pipe),
     * which says less about why.
     *
     * @throws SSLException when the server refuses the handshake; returns only when it sends application data
     */
    private static void handshake(SSLContext context, int port) throws IOException {
        try (var socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            int first = socket.getInputStream().read();
            throw new AssertionError("the handshake was accepted: " + (first < 0 ? "the connection closed" : "data arrived") + " without an alert");
        }
    }

    private HttpResponse<Buffer> post(int port, String path, String body) {
        return join(client.post(port, "127.0.0.1", path).sendBuffer(Buffer.buffer(body)));
    }

    private HttpResponse<Buffer> get(int port, String path) {
        return join(client.get(port, "127.0.0.1", path).send());
    }
}
