package io.hetgpu.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hetgpu.extender.http.ServerOptions;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A stopped extender has ended its threads when {@link Extender#close} returns: Vert.x's event loops left
 * running sit in {@code epoll_wait}, which held the JVM's exit back by 300 ms, and an embedder (the test cluster)
 * would gather them. Netty completes a loop's termination just before its thread returns, so a thread may still be
 * leaving when close does: the test gives such a thread a second to be gone. A loop that was never closed stays in
 * {@code epoll_wait} for good, so it still fails the test.
 */
class ExtenderStopTest {

    @Test
    void closeReturnsOnceTheServersThreadsHaveEnded() {
        var before = new HashSet<>(Thread.getAllStackTraces().keySet());
        var config = ExtenderConfig.DEFAULTS;
        var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), Optional.empty());
        var started = Thread.getAllStackTraces().keySet().stream().filter(thread -> !before.contains(thread)).toList();
        assertThat(started).as("the server's event loops").anyMatch(thread -> thread.getName().startsWith("vert.x-eventloop"));

        extender.close();

        await().atMost(Duration.ofSeconds(1)).untilAsserted(() ->
                assertThat(started).filteredOn(Thread::isAlive).as("threads the extender started, still running after close").isEmpty());
    }
}
