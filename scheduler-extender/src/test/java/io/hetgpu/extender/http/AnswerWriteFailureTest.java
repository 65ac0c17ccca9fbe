package io.hetgpu.extender.http;

import io.hetgpu.extender.RequestOnlyVerbs;
import static io.hetgpu.extender.http.ExtenderServerTest.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hetgpu.extender.KubeJson;
import io.vertx.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** An answer whose caller is gone: kube-scheduler timed out and closed the connection while the verb was working. */
class AnswerWriteFailureTest {

    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String CPU = KubeJson.text("node-cpu.json");

    private final CountDownLatch working = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private final ExtenderMetrics metrics = new ExtenderMetrics();
    private PrintStream stderr;
    private Vertx vertx;
    private ExtenderServer server;

    @BeforeEach
    void start() {
        // slf4j-simple writes to whatever System.err is when it logs: the log is read here, and still shown.
        stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, log), true, StandardCharsets.UTF_8));
        vertx = Vertx.vertx();
        var verbs = RequestOnlyVerbs.create((pod, table) -> {
            // The prioritize verb's work is held here until the caller has hung up.
            working.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        server = join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null), verbs, metrics));
    }

    @AfterEach
    void stop() {
        release.countDown();
        System.setErr(stderr);
        server.close();
        join(vertx.close());
    }

    @Test
    void anAnswerThatCannotBeWrittenIsLoggedOnceWithItsVerbSizeAndCauseAndCounted() throws Exception {
        // Larger than the server answers on its event loop: the verb's work is held on the worker pool, as a large one's is.
        var nodes = String.join(",", java.util.Collections.nCopies(1 + ExtenderServer.INLINE_BODY_BYTES / CPU.length(), CPU));
        var body = ("{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + nodes + "]}}").getBytes(StandardCharsets.UTF_8);
        try (var socket = new Socket("127.0.0.1", server.port())) {
            var out = socket.getOutputStream();
            out.write(("POST /prioritize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            assertThat(working.await(10, TimeUnit.SECONDS)).as("the verb started").isTrue();
        }
        // The server has seen the connection go once it gives the request's bytes back.
        await().atMost(Duration.ofSeconds(10)).until(() -> metrics.scrape().contains("hetgpu_extender_request_bytes_in_flight_bytes 0.0"));

        release.countDown();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(metrics.scrape()).contains("hetgpu_extender_answers_failed_total{verb=\"prioritize\"} 1.0"));
        var lines = log.toString(StandardCharsets.UTF_8).lines().filter(line -> line.contains("could not be written")).toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.getFirst()).containsPattern(Pattern.compile(
                "WARN .*ExtenderServer - prioritize \\(POST /prioritize\\): the answer of \\d+ bytes \\(HTTP 200\\) could not be written to .*: \\S+"));
    }

    /** Writes to both streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public synchronized void write(int b) throws java.io.IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) throws java.io.IOException {
            first.write(bytes, offset, length);
            second.write(bytes, offset, length);
        }

        @Override
        public void flush() throws java.io.IOException {
            first.flush();
        }
    }
}
