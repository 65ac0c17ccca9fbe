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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where a verb's work runs: a small request on the event loop that read it (a hand-off to the worker pool and back
 * costs more than its work), a large one on the worker pool, so that a probe never waits behind it.
 */
class WhereVerbsRunTest {

    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String CPU = KubeJson.text("node-cpu.json");

    private final List<String> threads = new CopyOnWriteArrayList<>();
    private Vertx vertx;
    private ExtenderServer server;
    private WebClient client;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        // The prioritize verb tells its listener each placement: the thread it is told on is the thread the verb runs on.
        var verbs = RequestOnlyVerbs.create((pod, table) -> threads.add(Thread.currentThread().getName()));
        server = join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null), verbs, new ExtenderMetrics()));
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() {
        server.close();
        join(vertx.close());
    }

    @Test
    void aSmallPrioritizeRunsOnTheEventLoopAndALargeOneOnTheWorkerPool() {
        prioritize(1);
        prioritize(1 + ExtenderServer.INLINE_BODY_BYTES / CPU.length());

        assertThat(threads).hasSize(2);
        assertThat(threads.get(0)).startsWith("vert.x-eventloop-thread-");
        assertThat(threads.get(1)).startsWith("hetgpu-verbs-");
    }

    private void prioritize(int nodes) {
        var body = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + String.join(",", Collections.nCopies(nodes, CPU)) + "]}}";
        var response = join(client.post(server.port(), "127.0.0.1", "/prioritize").sendBuffer(Buffer.buffer(body)));
        assertThat(response.statusCode()).isEqualTo(200);
    }
}
