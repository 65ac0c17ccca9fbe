package io.hetgpu.deviceplugin.dra;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The GPUs' health as kubelet's DRA health streams tell it: every device of the node's pool in each message, at the
 * stream's start, after each change and again every {@link Settings#resend} (kubelet shows a device it has not heard
 * of within its timeout as Unknown). A stream holds at most one message waiting: while its reader is slow or stuck, a
 * change only marks it behind, and the message sent once it reads again is the state then, the transitions in between
 * dropped; so neither memory nor the health watcher ever waits on kubelet. No gRPC here: {@link Sink} is the call.
 */
public final class HealthStreams implements AutoCloseable {

    /**
     * @param maxStreams how many streams may be open at once (kubelet keeps one per registration; more are refused)
     * @param resend     how often every stream is sent the state again without a change
     * @param timeout    how long kubelet may trust a message without a newer one ({@code health_check_timeout_seconds})
     */
    public record Settings(int maxStreams, Duration resend, Duration timeout) {
        public Settings {
            if (maxStreams < 1) {
                throw new IllegalArgumentException("maxStreams must be at least 1, not " + maxStreams);
            }
            if (resend.isNegative() || resend.isZero() || timeout.compareTo(resend) <= 0) {
                throw new IllegalArgumentException("resend (" + resend + ") must be positive and shorter than timeout (" + timeout + ")");
            }
        }
    }

    /** kubelet cuts a longer message; cut here (with room for the length Quote adds), so the cut is ours and says so. */
    static final int MAX_MESSAGE = 1024;

    /** One device's health as last determined. */
    public record DeviceState(String poolName, String deviceName, DeviceHealth health, String message) { }

    /** What one message of a stream says: every device, determined at {@code at}, trusted for {@code timeout}. */
    public record Report(List<DeviceState> devices, Instant at, Duration timeout) {
        public Report {
            devices = List.copyOf(devices);
        }
    }

    /** One call's outgoing side, as gRPC's server call observer offers it; none of these may block. */
    public interface Sink {
        /** Whether a message sent now goes out without queueing behind unread ones. */
        boolean ready();

        void send(Report report);

        /** Ends the stream normally. */
        void complete();

        /** Ends the stream with a reason: refused, or the plugin stopping. */
        void fail(String reason);
    }

    private final String pool;
    private final NodeTopology topology;
    private final Settings settings;
    private final Clock clock;
    private final ScheduledExecutorService resender;
    /** By position; written by the health watcher, read by every send. Guarded by this. */
    private final List<DeviceState> states;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    private boolean closed; // guarded by this

    /** The devices of {@code topology}, in pool {@code pool}, with their health as they are now. */
    public HealthStreams(String pool, NodeTopology topology, Settings settings, Clock clock) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.topology = topology;
        this.settings = settings;
        this.clock = clock;
        this.states = new ArrayList<>(topology.size());
        for (int position = 0; position < topology.size(); position++) {
            var health = topology.device(position).health();
            states.add(new DeviceState(pool, HetgpuDra.deviceName(position), health,
                    health == DeviceHealth.HEALTHY ? "" : "unhealthy when the driver started"));
        }
        this.resender = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("dra-health-resend").factory());
        long every = settings.resend().toMillis();
        resender.scheduleAtFixedRate(this::resend, every, every, TimeUnit.MILLISECONDS);
    }

    /** A GPU's health changed (the same change that taints it in the slice); every stream is told. Never blocks on one. */
    public void changed(HealthChange change) {
        var position = topology.positionOf(change.uuid());
        if (position.isEmpty()) {
            return;
        }
        synchronized (this) {
            states.set(position.get(), new DeviceState(pool, HetgpuDra.deviceName(position.get()), change.health(),
                    Quote.cut(change.reason(), MAX_MESSAGE - 32)));
        }
        streams.forEach(Stream::behind);
    }

    /** The state now, as the next message of any stream says it. */
    public synchronized Report report() {
        return new Report(states, clock.instant(), settings.timeout());
    }

    /**
     * Opens a stream on {@code sink} and sends it the state; empty (the sink failed with the reason) when the plugin is
     * stopping or {@link Settings#maxStreams} are open. The caller routes the call's ready and cancel signals to the stream.
     */
    public Optional<Stream> open(Sink sink) {
        var stream = new Stream(sink);
        synchronized (this) {
            if (closed) {
                sink.fail("the DRA driver is stopping");
                return Optional.empty();
            }
            if (streams.size() >= settings.maxStreams()) {
                sink.fail(settings.maxStreams() + " health streams are open already, the most this driver serves");
                return Optional.empty();
            }
            streams.add(stream);
        }
        stream.behind();
        return Optional.of(stream);
    }

    /** Streams open now. */
    public int openStreams() {
        return streams.size();
    }

    private void resend() {
        streams.forEach(Stream::behind);
    }

    /** Ends every stream normally (kubelet sees the stream end, not an error) and refuses new ones. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        resender.shutdownNow();
        for (var stream : streams) {
            stream.complete();
        }
        streams.clear();
    }

    /** One kubelet stream: at most one message waiting, the newest state. */
    public final class Stream {

        private final Sink sink;
        private boolean behind; // guarded by this: a state not sent yet
        private boolean ended;  // guarded by this

        private Stream(Sink sink) {
            this.sink = sink;
        }

        /** The state changed, or is due again: sent now if the reader keeps up, else once it is ready. */
        void behind() {
            synchronized (this) {
                behind = true;
            }
            ready();
        }

        /** The call can take a message (gRPC's on-ready signal): the state then is sent, if this stream is behind. */
        public synchronized void ready() {
            // The state is read at send time, so a reader that was stuck gets the latest one, never a backlog.
            if (!ended && behind && sink.ready()) {
                behind = false;
                sink.send(report());
            }
        }

        /** kubelet went away (the call was cancelled): nothing more is sent. */
        public void cancelled() {
            synchronized (this) {
                ended = true;
            }
            streams.remove(this);
        }

        private synchronized void complete() {
            if (!ended) {
                ended = true;
                sink.complete();
            }
        }
    }
}
