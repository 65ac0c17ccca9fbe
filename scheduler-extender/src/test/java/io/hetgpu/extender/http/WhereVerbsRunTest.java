package io.hetgpu.extender.http;

import static io.hetgpu.extender.http.ExtenderServerTest.join;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.RequestOnlyVerbs;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.WebClient;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where a verb's work runs: a small request on the event loop that read it (a hand-off to the worker pool and back
 * costs more than its work), a large one on the worker pool, so that a probe never waits behind it; with a metrics
 * port, whose server has an event loop of its own for the probes, every filter and prioritize on the verbs' event loop.
 */
class WhereVerbsRunTest {

    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String CPU = KubeJson.text("node-cpu.json");

    private final List<String> threads = new CopyOnWriteArrayList<>();
    /** Released to let a prioritize that is holding its thread go on (open unless a test closes it). */
    private volatile CountDownLatch hold = new CountDownLatch(0);
    private final CountDownLatch held = new CountDownLatch(1);
    private Vertx vertx;
    private ExtenderServer server;
    private WebClient client;

    @BeforeEach
    void start() {
        // One event loop for everything the test's Vert.x runs: the verbs' servers and the client share it, and so would
        // the metrics port's server unless it has a loop of its own.
        vertx = Vertx.vertx(new io.vertx.core.VertxOptions().setEventLoopPoolSize(1));
        client = WebClient.create(vertx);
    }

    private void serve(ServerOptions options) {
        // The prioritize verb tells its listener each placement: the thread it is told on is the thread the verb runs on.
        var verbs = RequestOnlyVerbs.create((pod, table) -> {
            threads.add(Thread.currentThread().getName());
            held.countDown();
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        server = join(ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics()));
    }

    @AfterEach
    void stop() {
        hold.countDown();
        server.close();
        join(vertx.close());
    }

    @Test
    void aSmallPrioritizeRunsOnTheEventLoopAndALargeOneOnTheWorkerPool() {
        serve(new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null));
        assertThat(join(prioritize(1)).statusCode()).isEqualTo(200);
        assertThat(join(prioritize(1 + ExtenderServer.INLINE_BODY_BYTES / CPU.length())).statusCode()).isEqualTo(200);

        assertThat(threads).hasSize(2);
        assertThat(threads.get(0)).startsWith("vert.x-eventloop-thread-");
        assertThat(threads.get(1)).startsWith("hetgpu-verbs-");
    }

    @Test
    void withAMetricsPortALargePrioritizeRunsOnTheEventLoopAndProbesThereDoNotWaitForIt() throws Exception {
        serve(new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null).withMetrics("127.0.0.1", 0));
        hold = new CountDownLatch(1);

        var large = prioritize(1 + ExtenderServer.INLINE_BODY_BYTES / CPU.length());
        assertThat(held.await(10, TimeUnit.SECONDS)).as("the prioritize reached its verb").isTrue();
        // The verbs' event loop is held by the prioritize: the metrics port's own loop still answers.
        var probe = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + server.metricsPort() + "/healthz")).timeout(java.time.Duration.ofSeconds(5)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(probe.statusCode()).isEqualTo(200);
        assertThat(large.isComplete()).as("the prioritize still held").isFalse();
        hold.countDown();

        assertThat(join(large).statusCode()).isEqualTo(200);
        assertThat(threads).singleElement().asString().startsWith("vert.x-eventloop-thread-");
    }

    private io.vertx.core.Future<io.vertx.ext.web.client.HttpResponse<Buffer>> prioritize(int nodes) {
        var body = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + String.join(",", Collections.nCopies(nodes, CPU)) + "]}}";
        return client.post(server.port(), "127.0.0.1", "/prioritize").sendBuffer(Buffer.buffer(body));
    }
}
