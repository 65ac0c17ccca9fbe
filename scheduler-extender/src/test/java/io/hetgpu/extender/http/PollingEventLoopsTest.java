package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.SelectStrategy;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PollingEventLoopsTest {

    private static final long WINDOW = TimeUnit.MILLISECONDS.toNanos(20);

    private static PollingEventLoops.PollFirst armed() {
        var strategy = new PollingEventLoops.PollFirst(WINDOW);
        strategy.arm();
        return strategy;
    }

    @Test
    void aLoopWithTasksSelectsOnceWithoutWaiting() throws Exception {
        var selects = new AtomicInteger();
        int strategy = armed().calculateStrategy(() -> {
            selects.incrementAndGet();
            return 0;
        }, true);
        assertThat(strategy).isZero();
        assertThat(selects).hasValue(1);
    }

    @Test
    void aSocketReadyDuringTheWindowEndsThePoll() throws Exception {
        var selects = new AtomicInteger();
        int strategy = armed().calculateStrategy(() -> selects.incrementAndGet() == 3 ? 2 : 0, false);
        assertThat(strategy).as("the ready sockets' count, for the loop to process").isEqualTo(2);
        assertThat(selects).hasValue(3);
    }

    @Test
    void nothingReadyForTheWholeWindowBlocks() throws Exception {
        var selects = new AtomicInteger();
        var poll = armed();
        long start = System.nanoTime();
        int strategy = poll.calculateStrategy(() -> {
            selects.incrementAndGet();
            return 0;
        }, false);
        assertThat(strategy).isEqualTo(SelectStrategy.SELECT);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(WINDOW);
        assertThat(selects.get()).as("non-blocking selects while polling").isGreaterThan(1);

        selects.set(0);
        assertThat(poll.calculateStrategy(selects::incrementAndGet, false)).as("once the window has passed, until an answer arms it again")
                .isEqualTo(SelectStrategy.SELECT);
        assertThat(selects).hasValue(0);
    }

    @Test
    void theRestOfABodyIsPolledForOnlyWhereAPollCaughtItsStart() throws Exception {
        var selects = new AtomicInteger();
        var poll = armed();
        // This thread runs the strategy, so it is the loop that the server's calls below arm.
        assertThat(poll.calculateStrategy(() -> 1, false)).as("a poll catches the first piece").isEqualTo(1);
        PollingEventLoops.expectMoreIfPolled();
        assertThat(poll.calculateStrategy(() -> selects.incrementAndGet() == 2 ? 1 : 0, false)).as("and polls for the next").isEqualTo(1);
        assertThat(selects).hasValue(2);

        // Woken by a blocking select instead: the loop sleeps until what has gathered wakes it again.
        assertThat(poll.calculateStrategy(selects::incrementAndGet, false)).isEqualTo(SelectStrategy.SELECT);
        PollingEventLoops.expectMoreIfPolled();
        selects.set(0);
        assertThat(poll.calculateStrategy(selects::incrementAndGet, false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(selects).hasValue(0);
    }

    @Test
    void withoutAnAnswerTheLoopBlocksAtOnce() throws Exception {
        // Between the pieces of a large request nothing is answered: the loop sleeps until what has gathered wakes it.
        var selects = new AtomicInteger();
        assertThat(new PollingEventLoops.PollFirst(WINDOW).calculateStrategy(selects::incrementAndGet, false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(selects).hasValue(0);
    }

    @Test
    void aTaskHandedToAPollingLoopRunsWithoutWaitingForTheWindowToEnd() throws Exception {
        // A window far longer than the test may take: a task that waited for its end would fail the test by its timeout.
        var vertx = PollingEventLoops.vertx(Duration.ofSeconds(30));
        try {
            var context = vertx.getOrCreateContext();
            for (int handOff = 0; handOff < 20; handOff++) {
                // Each hand-off finds the loop polling after the one before: a select clears the wake-up the task sent.
                var ran = new CompletableFuture<Void>();
                context.runOnContext(v -> {
                    PollingEventLoops.expectBytes();
                    ran.complete(null);
                });
                ran.get(5, TimeUnit.SECONDS);
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anEventLoopPollsAfterAnAnswerAndSleepsOnceTheWindowHasPassed() throws Exception {
        var threads = ManagementFactory.getThreadMXBean();
        assertThat(threads.isCurrentThreadCpuTimeSupported()).isTrue();
        // Polling: a 10 ms window armed every 5 ms, so that the loop never gets to sleep; sleeping: the default window.
        // A polling loop spends CPU whenever the host runs it, a sleeping one only on its answers: on a busy host the
        // first gets less, so the two are compared with each other rather than with the wall clock.
        long pollingCpu = loopCpuDuring(Duration.ofMillis(10), Duration.ofMillis(5));
        long sleepingCpu = loopCpuDuring(ServerOptions.DEFAULT_EVENT_LOOP_POLL, Duration.ofMillis(5));
        assertThat(pollingCpu).as("CPU of a loop polling through 400 ms, against one sleeping between answers (%d ns)", sleepingCpu)
                .isGreaterThan(2 * sleepingCpu);
        assertThat(sleepingCpu).as("CPU of a loop with 100 µs windows after answers 5 ms apart, over 400 ms")
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(60));
    }

    /** The event loop thread's CPU time over 400 ms in which it answers (arms its poll) every {@code every}. */
    private static long loopCpuDuring(Duration poll, Duration every) throws Exception {
        var vertx = PollingEventLoops.vertx(poll);
        try {
            var context = vertx.getOrCreateContext();
            var loopThread = new CompletableFuture<Long>();
            context.runOnContext(v -> loopThread.complete(Thread.currentThread().threadId()));
            long id = loopThread.get(5, TimeUnit.SECONDS);
            var threads = ManagementFactory.getThreadMXBean();
            long before = threads.getThreadCpuTime(id);
            var timer = new CompletableFuture<Void>();
            // The wait is the measurement: the loop's CPU over a span of wall-clock time.
            long ticks = Duration.ofMillis(400).toNanos() / every.toNanos();
            var left = new AtomicInteger((int) ticks);
            // Set from the context, so that the timer fires on the loop measured.
            context.runOnContext(v -> vertx.setPeriodic(every.toMillis(), periodic -> {
                PollingEventLoops.expectBytes();
                if (left.decrementAndGet() == 0) {
                    vertx.cancelTimer(periodic);
                    timer.complete(null);
                }
            }));
            timer.get(10, TimeUnit.SECONDS);
            return threads.getThreadCpuTime(id) - before;
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aZeroWindowIsVertxsOwnTransport() throws Exception {
        var vertx = PollingEventLoops.vertx(Duration.ZERO);
        try {
            assertThat(((io.vertx.core.impl.VertxInternal) vertx).transport()).isNotInstanceOf(PollingEventLoops.class);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aWindowOutsideItsRangeIsRefusedNamingIt() {
        var options = new ServerOptions("127.0.0.1", 0, 1024, null, null);
        assertThat(options.eventLoopPoll()).isEqualTo(Duration.ofNanos(100_000));
        assertThatThrownBy(() -> options.withEventLoopPoll(Duration.ofMillis(11)))
                .hasMessage("eventLoopPoll: expected 0 to 10 ms, got 11000 microseconds");
        assertThatThrownBy(() -> options.withEventLoopPoll(Duration.ofNanos(-1000)))
                .hasMessage("eventLoopPoll: expected 0 to 10 ms, got -1 microseconds");
        assertThatThrownBy(() -> PollingEventLoops.vertx(Duration.ofNanos(-1)))
                .hasMessageStartingWith("eventLoopPoll: expected 0 or more");
    }
}
