package io.hetgpu.extender.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.InternetProtocolFamily;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.datagram.DatagramSocketOptions;
import io.vertx.core.impl.VertxBuilder;
import io.vertx.core.impl.transports.JDKTransport;
import io.vertx.core.net.ClientOptionsBase;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.spi.transport.Transport;
import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;

/**
 * Vert.x's own NIO transport, except that an event loop that expects bytes at once polls its sockets for a short while
 * before it blocks in {@code epoll_wait}, so that they find it awake.
 *
 * <p>kube-scheduler sends its calls one at a time, each as soon as it has read the answer before and run its own
 * plugins. An event loop that blocks at once is asleep when the call lands, and waking a sleeping thread on another core
 * (an interrupt between cores, through the hypervisor on a cloud VM) cost about as much as answering a 100-node filter:
 * on the 2-core development machine a Netty server answering fixed bodies took 0.23 ms a filter+prioritize round
 * blocking at once, 0.15-0.17 ms polling for 100 µs after every answer. Go's runtime, which kube-scheduler runs on,
 * also lets a thread spin for work a while before it parks.
 *
 * <p>The server says when to poll ({@link #expectBytes()}): after an answer small enough that its caller comes back
 * within the window, and after each piece of a body whose first pieces a poll caught ({@link #expectMoreIfPolled()}).
 * Armed by answers alone, a loop read the first piece of a large request that followed at once, slept, and was woken
 * again for each of the rest; armed by every piece of every body, it read large requests piece by piece even where it
 * had slept until they came, and the p99 at 5,000 names rose. The cost is
 * CPU, at most one window each time and none while the extender is idle. Polling stops as soon as a socket is ready
 * or another thread hands the loop a task (an answer from the worker pool), so neither waits for the window to end; a
 * timer may fire up to one window late. The acceptor loop blocks at once, as Vert.x's does.
 *
 * <p>Between two looks at the sockets the loop yields its core ({@code sched_yield}) rather than spinning on it: where
 * a core is free the yield returns at once, but where the caller waits for the same core (another process busy on the
 * other), a spinning loop kept it from sending the very call the loop polled for. With one core of two kept busy,
 * spinning made a 100-name round 0.15 ms p50 against 0.12 sleeping at once; yielding, 0.11.
 */
public final class PollingEventLoops implements Transport {

    /** The strategy of the polling event loop running on this thread, if it is one; set by the loop itself. */
    private static final ThreadLocal<PollFirst> LOOP_STRATEGY = new ThreadLocal<>();

    private final long pollNanos;

    private PollingEventLoops(Duration poll) {
        this.pollNanos = poll.toNanos();
    }

    /**
     * A Vert.x instance whose event loops poll for {@code poll} before they block; Vert.x's own for a zero window. Vert.x
     * 4 takes a transport only through its implementation's builder: the public one has no such method.
     */
    public static Vertx vertx(Duration poll) {
        if (poll.isZero()) {
            return Vertx.vertx();
        }
        if (poll.isNegative()) {
            throw new IllegalArgumentException("eventLoopPoll: expected 0 or more, got " + poll);
        }
        return new VertxBuilder(new VertxOptions()).findTransport(new PollingEventLoops(poll)).init().vertx();
    }

    /**
     * Has the polling event loop running this code poll before it next sleeps, as bytes are expected at once (the
     * caller's next call after a small answer, the rest of a body). Nothing on any other thread.
     */
    public static void expectBytes() {
        var strategy = LOOP_STRATEGY.get();
        if (strategy != null) {
            strategy.arm();
        }
    }

    /**
     * Has the polling event loop running this code poll again before it next sleeps if a poll is what woke it: the rest
     * of a body whose first pieces a poll caught is on its way. A loop that slept until the bytes woke it read what had
     * gathered meanwhile, and sleeps again until more has. Nothing on any other thread.
     */
    public static void expectMoreIfPolled() {
        var strategy = LOOP_STRATEGY.get();
        if (strategy != null && strategy.polled) {
            strategy.arm();
        }
    }

    @Override
    public EventLoopGroup eventLoopGroup(int type, int threads, ThreadFactory threadFactory, int ioRatio) {
        if (type == ACCEPTOR_EVENT_LOOP_GROUP) {
            return JDKTransport.INSTANCE.eventLoopGroup(type, threads, threadFactory, ioRatio);
        }
        var group = new NioEventLoopGroup(threads, threadFactory, SelectorProvider.provider(), () -> new PollFirst(pollNanos));
        group.setIoRatio(ioRatio);
        return group;
    }

    /**
     * Netty's default strategy (block unless a task waits), after a window of non-blocking selects when the server has
     * armed it. One per event loop, used on that loop's thread only.
     */
    static final class PollFirst implements SelectStrategy {
        private final long pollNanos;
        private boolean armed;
        private boolean known;
        /** Whether a poll, not a blocking select, found the sockets ready last. */
        private boolean polled;

        PollFirst(long pollNanos) {
            this.pollNanos = pollNanos;
        }

        void arm() {
            armed = true;
        }

        @Override
        public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
            if (!known) {
                LOOP_STRATEGY.set(this);
                known = true;
            }
            if (hasTasks) {
                return selectNow.get();
            }
            polled = false;
            if (!armed) {
                return SelectStrategy.SELECT;
            }
            armed = false;
            long until = System.nanoTime() + pollNanos;
            do {
                int ready = selectNow.get();
                // A select clears the wake-up another thread sent with a task: look at the queue instead.
                if (ready > 0 || tasksWaiting()) {
                    polled = ready > 0;
                    return ready;
                }
                Thread.yield();
            } while (System.nanoTime() - until < 0);
            return SelectStrategy.SELECT;
        }

        private static boolean tasksWaiting() {
            return ThreadExecutorMap.currentExecutor() instanceof SingleThreadEventExecutor loop && loop.pendingTasks() > 0;
        }
    }

    @Override
    public DatagramChannel datagramChannel() {
        return JDKTransport.INSTANCE.datagramChannel();
    }

    @Override
    public DatagramChannel datagramChannel(InternetProtocolFamily family) {
        return JDKTransport.INSTANCE.datagramChannel(family);
    }

    @Override
    public ChannelFactory<? extends io.netty.channel.Channel> channelFactory(boolean domainSocket) {
        return JDKTransport.INSTANCE.channelFactory(domainSocket);
    }

    @Override
    public ChannelFactory<? extends ServerChannel> serverChannelFactory(boolean domainSocket) {
        return JDKTransport.INSTANCE.serverChannelFactory(domainSocket);
    }

    @Override
    public void configure(DatagramChannel channel, DatagramSocketOptions options) {
        JDKTransport.INSTANCE.configure(channel, options);
    }

    @Override
    public void configure(ClientOptionsBase options, boolean domainSocket, Bootstrap bootstrap) {
        JDKTransport.INSTANCE.configure(options, domainSocket, bootstrap);
    }

    @Override
    public void configure(NetServerOptions options, boolean domainSocket, ServerBootstrap bootstrap) {
        JDKTransport.INSTANCE.configure(options, domainSocket, bootstrap);
    }
}
