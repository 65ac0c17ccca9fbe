package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.handler.ssl.util.SelfSignedCertificate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extender's jar as it ships, with the JVM options of its Dockerfile, in the layout for running it beside
 * kube-scheduler: the verbs on loopback, the probes and metrics on a port of their own; and, run apart from
 * kube-scheduler, the verbs behind mutual TLS.
 */
class ExtenderJarPortsTest {

    private static final Duration START = Duration.ofSeconds(60);
    private static final String BIND = "{\"PodName\":\"train-0\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"dgx-1\"}";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void theVerbsListenOnLoopbackOnlyAndTheMetricsPortServesProbesAndMetricsOnly() throws Exception {
        int port = freePort();
        int metricsPort = freePort();
        try (var extender = start(List.of("--host=127.0.0.1", "--port=" + port, "--metrics-port=" + metricsPort, "--kubeconfig=none"))) {
            var metrics = "http://127.0.0.1:" + metricsPort;
            awaitHealthy(extender, metrics);
            assertThat(extender.output()).as("start-up line").contains("listening on http://127.0.0.1:" + port,
                    "metrics and probes also on http://0.0.0.0:" + metricsPort, "event loops poll 100 microseconds after an answer before they sleep");

            // Bound to 127.0.0.1 only: another loopback address of the same machine is refused.
            try (var socket = new Socket()) {
                assertThatThrownBy(() -> socket.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), port), 2_000))
                        .isInstanceOf(ConnectException.class);
            }
            assertThat(send(post("http://127.0.0.1:" + port + "/bind", BIND)).statusCode()).as("the verbs' port").isEqualTo(200);

            assertThat(send(post(metrics + "/filter", "{}")).statusCode()).isEqualTo(404);
            assertThat(send(post(metrics + "/bind", BIND)).statusCode()).isEqualTo(404);
            assertThat(send(get(metrics + "/healthz")).statusCode()).isEqualTo(200);
            var scrape = send(get(metrics + "/metrics"));
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("hetgpu_extender_binds_total");
            assertThat(extender.output()).as("log").doesNotContain("Exception");
        }
    }

    @Test
    void withAClientCaABindWithoutAClientCertificateFailsInTheHandshake() throws Exception {
        var server = new SelfSignedCertificate("localhost");
        var scheduler = new SelfSignedCertificate("kube-scheduler");
        int port = freePort();
        int metricsPort = freePort();
        try (var extender = start(List.of("--host=127.0.0.1", "--port=" + port, "--metrics-port=" + metricsPort, "--kubeconfig=none",
                "--tls-cert=" + server.certificate(), "--tls-key=" + server.privateKey(), "--tls-client-ca=" + scheduler.certificate()))) {
            awaitHealthy(extender, "http://127.0.0.1:" + metricsPort);

            assertThatThrownBy(() -> handshake(tls(null, null), port)).isInstanceOf(SSLException.class)
                    .hasMessageContaining("certificate_required");
            // The certificate the CA file names is let in: the refusal is about the certificate, not TLS as a whole.
            assertThat(bind(tls(scheduler.key(), scheduler.cert()), port)).startsWith("HTTP/1.1 200 OK");
        } finally {
            server.delete();
            scheduler.delete();
        }
    }

    private JarProcess start(List<String> args) {
        return JarProcess.start(SCHEDULER_EXTENDER.jar(), SCHEDULER_EXTENDER.dockerJvmOptions(), new ArrayList<>(args),
                Map.of("HOME", dir.toString()), dir.resolve("extender.log"));
    }

    private void awaitHealthy(JarProcess extender, String metrics) {
        await("the extender answers /healthz on its metrics port").atMost(START).ignoreExceptions().untilAsserted(() -> {
            assertThat(extender.isAlive()).as(extender::describe).isTrue();
            assertThat(send(get(metrics + "/healthz")).statusCode()).isEqualTo(200);
        });
    }

    /** A client's TLS context: it trusts any server (the test checks the client side only) and presents the key when given. */
    private static SSLContext tls(java.security.PrivateKey key, X509Certificate certificate) throws GeneralSecurityException, IOException {
        var keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        if (key != null) {
            keys.setKeyEntry("client", key, new char[0], new X509Certificate[] {certificate});
        }
        var keyManagers = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(keys, new char[0]);
        var context = SSLContext.getInstance("TLS");
        context.init(keyManagers.getKeyManagers(), new TrustManager[] {new TrustAnyServer()}, null);
        return context;
    }

    /**
     * A handshake, then a read without writing: under TLS 1.3 the server judges the client's certificate after the client
     * has finished its side, so the refusal arrives as an alert on the first read.
     */
    private static void handshake(SSLContext context, int port) throws IOException {
        try (var socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            int first = socket.getInputStream().read();
            throw new AssertionError("the handshake was accepted (" + (first < 0 ? "closed" : "data") + " without an alert)");
        }
    }

    private static String bind(SSLContext context, int port) throws IOException {
        try (var socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            var body = BIND.getBytes(StandardCharsets.UTF_8);
            var out = socket.getOutputStream();
            out.write(("POST /bind HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static HttpRequest get(String url) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build();
    }

    private static HttpRequest post(String url, String body) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static int freePort() {
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final class TrustAnyServer implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
