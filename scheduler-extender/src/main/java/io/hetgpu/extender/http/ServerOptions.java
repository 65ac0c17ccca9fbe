package io.hetgpu.extender.http;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How the HTTP front listens, and how much it lets callers hold.
 *
 * @param host               address to bind
 * @param port               port (0 picks a free one, for tests)
 * @param bodyLimitBytes     larger request bodies are refused with 413
 * @param tlsCert            PEM certificate for HTTPS, or null for plain HTTP
 * @param tlsKey             PEM private key for HTTPS, or null
 * @param bytesInFlightLimit request bodies read or being answered at once, in declared bytes (a body without a
 *                           Content-Length counts as the body limit); a request beyond it is refused with 429
 * @param readTimeout        a request whose body is not complete this long after its headers is cut off
 * @param idleTimeout        a connection that sends and receives nothing this long is closed
 * @param eventLoops         HTTP servers on as many event loops, sharing the port
 * @param tlsClientCa        PEM CA certificate(s) a caller's client certificate must verify against on the verbs'
 *                           port (mutual TLS; needs {@code tlsCert}), or null to ask callers for no certificate
 * @param metricsHost        address of the metrics port
 * @param metricsPort        a second, plain-HTTP port that serves only {@code /metrics}, {@code /healthz} and
 *                           {@code /readyz}: {@link #NO_METRICS_PORT} (-1) for none, 0 for any free port (tests)
 * @param eventLoopPoll      how long an event loop polls its sockets before it blocks, after a small answer or a piece
 *                           of a body whose start a poll caught ({@link PollingEventLoops}); zero blocks at once
 */
public record ServerOptions(String host, int port, long bodyLimitBytes, Path tlsCert, Path tlsKey,
                            long bytesInFlightLimit, Duration readTimeout, Duration idleTimeout, int eventLoops,
                            Path tlsClientCa, String metricsHost, int metricsPort, Duration eventLoopPoll) {

    /** {@link #metricsPort()} when there is no metrics port: the probes and metrics are on the verbs' port only. */
    public static final int NO_METRICS_PORT = -1;
    /** Where the metrics port listens unless told otherwise: kubelet and Prometheus come from other addresses. */
    public static final String ANY_ADDRESS = "0.0.0.0";

    /** Longer than kube-scheduler's extender httpTimeout (5 s shipped, 30 s at most in practice) needs to send a body. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Longer than Go's idle-connection timeout (90 s), so that kube-scheduler closes a kept-alive connection
     * before the extender does, and never sends a request on a connection the extender is closing.
     */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(120);
    /**
     * Long enough to catch kube-scheduler's next call when it follows a small answer at once, as the benchmark's client
     * sends it; short enough that the CPU spent polling stays a small share of the answer's own.
     */
    public static final Duration DEFAULT_EVENT_LOOP_POLL = Duration.ofNanos(100_000);
    /** The longest poll allowed: beyond it an event loop would spin through gaps that are not a caller's round trip. */
    public static final Duration MAX_EVENT_LOOP_POLL = Duration.ofMillis(10);

    public ServerOptions {
        if (bytesInFlightLimit < bodyLimitBytes) {
            // A body the limit allows must be answerable when it is the only one.
            throw new IllegalArgumentException("bytesInFlightLimit (" + bytesInFlightLimit + ") must be at least bodyLimitBytes (" + bodyLimitBytes + ")");
        }
        if (eventLoops < 1) {
            throw new IllegalArgumentException("eventLoops: expected at least 1, got " + eventLoops);
        }
        if (tlsClientCa != null && tlsCert == null) {
            throw new IllegalArgumentException("tlsClientCa (" + tlsClientCa + ") needs tlsCert and tlsKey: client certificates are asked for in a TLS handshake");
        }
        if (metricsPort < NO_METRICS_PORT || metricsPort > 65535) {
            throw new IllegalArgumentException("metricsPort: expected -1 (none), 0 (any free port) or 1..65535, got " + metricsPort);
        }
        java.util.Objects.requireNonNull(metricsHost, "metricsHost");
        if (eventLoopPoll.isNegative() || eventLoopPoll.compareTo(MAX_EVENT_LOOP_POLL) > 0) {
            throw new IllegalArgumentException("eventLoopPoll: expected 0 to " + MAX_EVENT_LOOP_POLL.toMillis() + " ms, got "
                    + eventLoopPoll.toNanos() / 1000 + " microseconds");
        }
    }

    /** Without mutual TLS or a metrics port, as before either existed. */
    public ServerOptions(String host, int port, long bodyLimitBytes, Path tlsCert, Path tlsKey,
                         long bytesInFlightLimit, Duration readTimeout, Duration idleTimeout, int eventLoops) {
        this(host, port, bodyLimitBytes, tlsCert, tlsKey, bytesInFlightLimit, readTimeout, idleTimeout, eventLoops,
                null, ANY_ADDRESS, NO_METRICS_PORT, DEFAULT_EVENT_LOOP_POLL);
    }

    /** The defaults for what callers may hold: bytes in flight from the heap, timeouts, one event loop per core. */
    public ServerOptions(String host, int port, long bodyLimitBytes, Path tlsCert, Path tlsKey) {
        this(host, port, bodyLimitBytes, tlsCert, tlsKey, defaultBytesInFlight(bodyLimitBytes, Runtime.getRuntime().maxMemory()),
                DEFAULT_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, Runtime.getRuntime().availableProcessors(), null, ANY_ADDRESS, NO_METRICS_PORT, DEFAULT_EVENT_LOOP_POLL);
    }

    /**
     * An eighth of the heap, and never less than one body: a request costs several times its body on the heap
     * while it is answered (the buffer, the parsed objects, the answer), so an eighth leaves room for the informer
     * caches and the garbage collector.
     */
    public static long defaultBytesInFlight(long bodyLimitBytes, long maxHeapBytes) {
        return Math.max(bodyLimitBytes, maxHeapBytes / 8);
    }

    public ServerOptions withBytesInFlightLimit(long bytes) {
        return new ServerOptions(host, port, bodyLimitBytes, tlsCert, tlsKey, bytes, readTimeout, idleTimeout, eventLoops,
                tlsClientCa, metricsHost, metricsPort, eventLoopPoll);
    }

    public ServerOptions withTimeouts(Duration read, Duration idle) {
        return new ServerOptions(host, port, bodyLimitBytes, tlsCert, tlsKey, bytesInFlightLimit, read, idle, eventLoops,
                tlsClientCa, metricsHost, metricsPort, eventLoopPoll);
    }

    /** The verbs' port asks every caller for a client certificate issued by {@code caPem}'s CA, and refuses those without. */
    public ServerOptions withTlsClientCa(Path caPem) {
        return new ServerOptions(host, port, bodyLimitBytes, tlsCert, tlsKey, bytesInFlightLimit, readTimeout, idleTimeout, eventLoops,
                caPem, metricsHost, metricsPort, eventLoopPoll);
    }

    /** A metrics port on {@code host}: {@code port} 0 for any free port, {@link #NO_METRICS_PORT} for none. */
    public ServerOptions withMetrics(String host, int port) {
        return new ServerOptions(this.host, this.port, bodyLimitBytes, tlsCert, tlsKey, bytesInFlightLimit, readTimeout, idleTimeout, eventLoops,
                tlsClientCa, host, port, eventLoopPoll);
    }

    public ServerOptions withEventLoopPoll(Duration poll) {
        return new ServerOptions(host, port, bodyLimitBytes, tlsCert, tlsKey, bytesInFlightLimit, readTimeout, idleTimeout, eventLoops,
                tlsClientCa, metricsHost, metricsPort, poll);
    }

    public boolean tls() {
        return tlsCert != null;
    }

    /** Whether callers of the verbs' port must present a client certificate. */
    public boolean mutualTls() {
        return tlsClientCa != null;
    }

    public boolean hasMetricsPort() {
        return metricsPort != NO_METRICS_PORT;
    }
}
