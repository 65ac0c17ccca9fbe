package io.hetgpu.deviceplugin.status;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads the JDK's HTTP server runs its exchanges on: a few daemon threads, a short queue, and a
 * deadline per exchange.
 *
 * <p>The JDK server reads a request's line and headers on the executor's thread, from a blocking
 * channel, so a client that sends half a request and stops holds a thread for as long as it likes
 * (by default the server runs exchanges on its one dispatcher thread, so that one client stalled
 * everything, {@code /healthz} included). Here an exchange still running at its deadline has its
 * thread interrupted; an interrupted blocking channel closes, the server drops that connection, and
 * the thread is free again. The JDK's own {@code sun.net.httpserver.maxReqTime}/{@code maxRspTime}
 * would do the same, but they are JVM-wide system properties read once, for every server in the
 * process; this keeps the limit with the server it belongs to. A full queue refuses the exchange,
 * and the server closes that connection.
 */
final class ExchangePool implements Executor, AutoCloseable {

    private final ThreadPoolExecutor threads;
    private final ScheduledExecutorService deadlines;
    private final Duration deadline;

    ExchangePool(int threadCount, int queueLength, Duration deadline) {
        if (threadCount < 1 || queueLength < 1) {
            throw new IllegalArgumentException("exchange pool needs at least one thread and one queue slot, got "
                    + threadCount + " threads and " + queueLength + " slots");
        }
        this.deadline = deadline;
        var count = new AtomicInteger();
        this.threads = new ThreadPoolExecutor(threadCount, threadCount, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queueLength),
                task -> Thread.ofPlatform().daemon().name("status-http-" + count.incrementAndGet()).unstarted(task),
                new ThreadPoolExecutor.AbortPolicy());
        this.deadlines = Executors.newSingleThreadScheduledExecutor(
                task -> Thread.ofPlatform().daemon().name("status-http-deadline").unstarted(task));
    }

    @Override
    public void execute(Runnable exchange) {
        threads.execute(new Deadlined(exchange));
    }

    @Override
    public void close() {
        threads.shutdownNow();
        deadlines.shutdownNow();
    }

    /** One exchange, interrupted if it is still running at the deadline, and never after it is done. */
    private final class Deadlined implements Runnable {

        private final Runnable exchange;
        private Thread runner;
        private boolean done;

        Deadlined(Runnable exchange) {
            this.exchange = exchange;
        }

        @Override
        public void run() {
            synchronized (this) {
                runner = Thread.currentThread();
            }
            var timer = deadlines.schedule(this::expire, deadline.toNanos(), TimeUnit.NANOSECONDS);
            try {
                exchange.run();
            } finally {
                timer.cancel(false);
                synchronized (this) {
                    done = true;
                }
                Thread.interrupted(); // an interrupt that came as the exchange ended must not hit the next one
            }
        }

        private synchronized void expire() {
            if (!done) {
                runner.interrupt();
            }
        }
    }
}
