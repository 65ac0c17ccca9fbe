package io.hetgpu.extender.http;

import io.hetgpu.extender.RequestOnlyVerbs;

import static io.hetgpu.extender.http.ExtenderServerTest.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.extender.KubeJson;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.ext.web.client.WebClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What one caller can hold: bytes in flight, half-sent bodies, and the probes beside them. */
class ExtenderServerLimitsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String DGX = KubeJson.text("node-dgx1-v100.json");
    private static final int BODY_LIMIT = 1024 * 1024;

    private Vertx vertx;
    private WebClient client;
    private final List<ExtenderServer> servers = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() throws IOException {
        for (var socket : sockets) {
            socket.close();
        }
        servers.forEach(ExtenderServer::close);
        join(vertx.close());
    }

    private ExtenderServer startServer(ServerOptions options) {
        var verbs = RequestOnlyVerbs.create();
        var server = join(ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics()));
        servers.add(server);
        return server;
    }

    private static ServerOptions options(long bytesInFlight, Duration readTimeout) {
        return new ServerOptions("127.0.0.1", 0, BODY_LIMIT, null, null).withBytesInFlightLimit(bytesInFlight)
                .withTimeouts(readTimeout, ServerOptions.DEFAULT_IDLE_TIMEOUT);
    }

    /** A POST that declares {@code declared} body bytes and sends {@code sent} of them, then stalls. */
    private Socket halfSent(int port, int declared, int sent) throws IOException {
        var socket = new Socket("127.0.0.1", port);
        sockets.add(socket);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + declared
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(" ".repeat(sent).getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return socket;
    }

    private String bigFilter(int nodes) {
        return "{\"Pod\":" + POD.replace("\"hetgpu.io/interconnect\": \"nvlink\",", "") + ",\"Nodes\":{\"items\":["
                + String.join(",", Collections.nCopies(nodes, DGX)) + "]},\"NodeNames\":null}";
    }

    @Test
    void probesAnswerWithinASecondWhileRequestsAreHalfSentAndBigOnesAreBusy() throws Exception {
        var server = startServer(options(64L * BODY_LIMIT, Duration.ofSeconds(30)));
        for (int i = 0; i < 16; i++) {
            halfSent(server.port(), 200_000, 100_000);
        }
        var busy = bigFilter(100);
        assertThat(busy.length()).isLessThan(BODY_LIMIT);
        var work = new ArrayList<CompletableFuture<?>>();
        for (int i = 0; i < 32; i++) {
            work.add(client.post(server.port(), "127.0.0.1", "/filter").sendBuffer(Buffer.buffer(busy))
                    .toCompletionStage().toCompletableFuture());
        }
        // A connection of its own, as the kubelet opens for each probe (the busy client's pool is full).
        var kubelet = WebClient.create(vertx);
        for (var probe : List.of("/healthz", "/readyz", "/healthz")) {
            var response = join(kubelet.get(server.port(), "127.0.0.1", probe).timeout(1000).send());
            assertThat(response.statusCode()).as(probe).isEqualTo(200);
        }
        for (var request : work) {
            assertThat(((io.vertx.ext.web.client.HttpResponse<?>) request.join()).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aBodyBeyondTheBytesInFlightIsRefusedWith429AndAcceptedOnceTheyAreGivenBack() throws Exception {
        var server = startServer(options(BODY_LIMIT, Duration.ofSeconds(30)));
        var holder = halfSent(server.port(), BODY_LIMIT - 1_000, 1_000);
        var body = bigFilter(2);
        // The held request has been admitted (its bytes taken) before the next one comes.
        await().atMost(Duration.ofSeconds(10)).until(() -> join(client.get(server.port(), "127.0.0.1", "/metrics").send())
                .bodyAsString().contains("hetgpu_extender_request_bytes_in_flight_bytes " + (BODY_LIMIT - 1_000) + ".0"));

        var refused = join(client.post(server.port(), "127.0.0.1", "/filter").sendBuffer(Buffer.buffer(body)));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.getHeader("Retry-After")).isEqualTo("1");
        assertThat(refused.getHeader("content-type")).isEqualTo("application/json");
        assertThat(JSON.readTree(refused.bodyAsString()).get("Error").asText())
                .startsWith("POST /filter: the extender is busy: " + (BODY_LIMIT - 1_000) + " bytes of requests in flight").endsWith("; retry");

        holder.close();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                join(client.post(server.port(), "127.0.0.1", "/filter").sendBuffer(Buffer.buffer(body))).statusCode()).isEqualTo(200));
        var metrics = join(client.get(server.port(), "127.0.0.1", "/metrics").send()).bodyAsString();
        assertThat(metrics).contains("hetgpu_extender_requests_refused_total{verb=\"filter\"} 1.0");
    }

    @Test
    void aConnectionWhoseBodyStallsPastTheReadTimeoutIsClosed() throws Exception {
        var server = startServer(options(BODY_LIMIT, Duration.ofMillis(300)));
        var stalled = halfSent(server.port(), 10_000, 100);
        stalled.setSoTimeout(10_000);

        InputStream in = stalled.getInputStream();
        // End of stream: the server closed the connection rather than wait for the rest forever.
        assertThat(in.read()).isEqualTo(-1);
        // Its bytes were given back: a body as large as the limit is answered.
        var response = join(client.post(server.port(), "127.0.0.1", "/filter").sendBuffer(Buffer.buffer(bigFilter(2))));
        assertThat(response.statusCode()).isEqualTo(200);
    }

    @Test
    void servesOnSeveralEventLoopsSharingOnePort() {
        var options = options(BODY_LIMIT, Duration.ofSeconds(10));
        var server = startServer(new ServerOptions(options.host(), 0, BODY_LIMIT, null, null, BODY_LIMIT,
                options.readTimeout(), options.idleTimeout(), 4));
        for (int i = 0; i < 8; i++) {
            var response = join(WebClient.create(vertx).get(server.port(), "127.0.0.1", "/healthz").send());
            assertThat(response.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aCertificateAndKeyThatDoNotMatchFailTheStartNamingBothFiles() {
        var one = SelfSignedCertificate.create("localhost");
        var other = SelfSignedCertificate.create("localhost");
        var options = new ServerOptions("127.0.0.1", 0, BODY_LIMIT, Path.of(one.certificatePath()), Path.of(other.privateKeyPath()));

        assertThatThrownBy(() -> startServer(options)).isInstanceOf(CompletionException.class).cause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("TLS certificate " + one.certificatePath() + " and key " + other.privateKeyPath()
                        + " do not match: the key is not the certificate's private key (RSA key, RSA certificate)");
    }

    @Test
    void aKeyFileThatIsNotPemFailsTheStartNamingBothFiles() throws IOException {
        var one = SelfSignedCertificate.create("localhost");
        var garbage = java.nio.file.Files.createTempFile("not-a-key", ".pem");
        java.nio.file.Files.writeString(garbage, "hello\n");
        var options = new ServerOptions("127.0.0.1", 0, BODY_LIMIT, Path.of(one.certificatePath()), garbage);

        assertThatThrownBy(() -> startServer(options)).cause().isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("TLS certificate " + one.certificatePath() + " and key " + garbage + " cannot be read as PEM: ");
    }
}
