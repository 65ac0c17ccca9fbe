package io.hetgpu.extender;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.hetgpu.extender.cluster.ApiServerTrust;
import io.hetgpu.extender.cluster.KubeconfigFile;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.gpu.release.ReleaseVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar hetgpu-scheduler-extender.jar [--host 127.0.0.1] [--port 8888] [--metrics-port 8889] [--config FILE]
 * [--kubeconfig PATH|in-cluster|none] [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]] ...}
 */
@Command(name = "hetgpu-scheduler-extender", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = "kube-scheduler extender that places GPU pods on heterogeneous clusters (filter, prioritize, preempt).")
public final class ExtenderMain implements Callable<Integer> {

    @Option(names = "--port", description = "HTTP(S) port (default 8888, or the config file's).")
    Integer port;

    @Option(names = "--host", defaultValue = "0.0.0.0", description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--config", paramLabel = "FILE", description = "YAML or JSON configuration file.")
    Path config;

    @Option(names = "--kubeconfig", defaultValue = "in-cluster", paramLabel = "PATH|in-cluster|none",
            description = "Where the API server is: a kubeconfig file, the pod's service account (default), "
                    + "or none (answer nodeCacheCapable: false requests from the request alone).")
    String kubeconfig;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "Certificate for HTTPS (kube-scheduler's enableHTTPS).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "Private key for HTTPS.")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "PEM",
            description = "CA certificate(s): callers of the verbs' port must present a client certificate it issued "
                    + "(mutual TLS, kube-scheduler's extender tlsConfig certFile/keyFile). Needs --tls-cert and --tls-key.")
    Path tlsClientCa;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Also serve GET /metrics, /healthz and /readyz, and nothing else, over plain HTTP on this port "
                    + "(default: the config file's metricsPort; 0: none). For kubelet and Prometheus when --host is loopback or mutual TLS is on.")
    Integer metricsPort;

    @Option(names = "--metrics-host", defaultValue = ServerOptions.ANY_ADDRESS,
            description = "Address the metrics port listens on (default ${DEFAULT-VALUE}).")
    String metricsHost;

    @Option(names = "--event-loop-poll-us", paramLabel = "MICROS",
            description = "After an answer of at most 32 KiB, and between the pieces of a body whose start a poll caught, how long an event loop polls its "
                    + "sockets before it sleeps, so that kube-scheduler's next call finds it awake (default 100; 0: sleep at once; at most 10000).")
    Integer eventLoopPollMicros;

    @Option(names = "--resource-name", description = "The GPU resource pods request (default nvidia.com/gpu).")
    String resourceName;

    @Option(names = "--priority-high", description = "spec.priority at or above which pods prefer the newest cards.")
    Integer priorityHigh;

    @Option(names = "--priority-low", description = "spec.priority at or below which pods prefer the oldest cards that fit.")
    Integer priorityLow;

    public static void main(String[] args) {
        var command = new CommandLine(new ExtenderMain());
        // A bad flag: the one line that says what is wrong, not the whole usage (the device plugin does the same).
        command.setParameterExceptionHandler((e, arguments) -> {
            e.getCommandLine().getErr().println("hetgpu-scheduler-extender: " + e.getMessage() + " (see --help)");
            return 2;
        });
        command.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("hetgpu-scheduler-extender: " + e.getMessage());
            return 2;
        });
        System.exit(command.execute(args));
    }

    /** Merges the config file and the flags; one-line errors for anything unusable. */
    ExtenderConfig settings() throws ExtenderConfig.ConfigException {
        var settings = config == null ? ExtenderConfig.DEFAULTS : ExtenderConfig.load(config);
        if (port != null) {
            if (port < 0 || port > 65535) {
                throw new ExtenderConfig.ConfigException("--port: expected 0..65535, got " + port);
            }
            settings = settings.withPort(port);
        }
        if (metricsPort != null) {
            if (metricsPort < 0 || metricsPort > 65535) {
                throw new ExtenderConfig.ConfigException("--metrics-port: expected 0..65535 (0: none), got " + metricsPort);
            }
            settings = settings.withMetricsPort(metricsPort);
        }
        if (settings.metricsPort() != 0 && settings.metricsPort() == settings.port()) {
            throw new ExtenderConfig.ConfigException((metricsPort != null ? "--metrics-port" : "metricsPort") + ": "
                    + settings.metricsPort() + " must differ from the verbs' port " + settings.port());
        }
        if (resourceName != null) {
            ExtenderConfig.checkResourceName("--resource-name", resourceName);
            settings = settings.withResourceName(resourceName);
        }
        if (priorityHigh != null || priorityLow != null) {
            int high = priorityHigh == null ? settings.priority().high() : priorityHigh;
            int low = priorityLow == null ? settings.priority().low() : priorityLow;
            if (low >= high) {
                throw new ExtenderConfig.ConfigException("--priority-low (" + low + ") must be below --priority-high (" + high + ")");
            }
            settings = settings.withPriority(new PriorityThresholds(high, low, settings.priority().trustedNamespaces()));
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new ExtenderConfig.ConfigException("--tls-cert and --tls-key go together: give both or neither");
        }
        if (tlsClientCa != null && tlsCert == null) {
            throw new ExtenderConfig.ConfigException("--tls-client-ca " + tlsClientCa
                    + " needs --tls-cert and --tls-key: client certificates are asked for in the TLS handshake");
        }
        if (eventLoopPollMicros != null && (eventLoopPollMicros < 0 || eventLoopPollMicros > ServerOptions.MAX_EVENT_LOOP_POLL.toNanos() / 1000)) {
            throw new ExtenderConfig.ConfigException("--event-loop-poll-us: expected 0.." + ServerOptions.MAX_EVENT_LOOP_POLL.toNanos() / 1000
                    + " (microseconds), got " + eventLoopPollMicros);
        }
        var files = new java.util.LinkedHashMap<String, Path>();
        files.put("--tls-cert", tlsCert);
        files.put("--tls-key", tlsKey);
        files.put("--tls-client-ca", tlsClientCa);
        for (var file : files.entrySet()) {
            if (file.getValue() != null && !Files.isReadable(file.getValue())) {
                throw new ExtenderConfig.ConfigException(file.getKey() + ": TLS file " + file.getValue() + " does not exist or cannot be read");
            }
        }
        return settings;
    }

    /** The start-up line's addresses: where kube-scheduler calls, how it must authenticate, and where probes go. */
    static String listening(ServerOptions options, int port, int metricsPort) {
        var line = new StringBuilder("hetgpu scheduler extender listening on ").append(options.tls() ? "https" : "http")
                .append("://").append(options.host()).append(':').append(port);
        if (options.mutualTls()) {
            line.append(" (client certificates from ").append(options.tlsClientCa()).append(" required)");
        }
        if (metricsPort != ServerOptions.NO_METRICS_PORT) {
            line.append(", metrics and probes also on http://").append(options.metricsHost()).append(':').append(metricsPort);
        }
        if (!options.eventLoopPoll().isZero()) {
            line.append("; event loops poll ").append(options.eventLoopPoll().toNanos() / 1000).append(" microseconds after an answer before they sleep");
        }
        return line.toString();
    }

    KubernetesClient client() throws ExtenderConfig.ConfigException {
        return switch (kubeconfig) {
            case "none" -> null;
            case "in-cluster" -> new KubernetesClientBuilder().withConfig(ApiServerTrust.namedCaAlone(Config.autoConfigure(null))).build();
            default -> {
                Config config;
                try {
                    config = KubeconfigFile.read(Path.of(kubeconfig), null);
                } catch (KubeconfigFile.Unreadable e) {
                    throw new ExtenderConfig.ConfigException("--kubeconfig " + e.getMessage());
                }
                try {
                    yield new KubernetesClientBuilder().withConfig(ApiServerTrust.namedCaAlone(config)).build();
                } catch (RuntimeException e) {
                    throw new ExtenderConfig.ConfigException("--kubeconfig " + kubeconfig + ": cannot be used: "
                            + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
                }
            }
        };
    }

    @Override
    public Integer call() throws Exception {
        ExtenderConfig settings;
        KubernetesClient client;
        try {
            settings = settings();
            client = client();
        } catch (ExtenderConfig.ConfigException e) {
            System.err.println("hetgpu-scheduler-extender: " + e.getMessage());
            return 2;
        }
        var options = new ServerOptions(host, settings.port(), settings.bodyLimitBytes(), tlsCert, tlsKey)
                .withTlsClientCa(tlsClientCa)
                .withMetrics(metricsHost, settings.metricsPort() == 0 ? ServerOptions.NO_METRICS_PORT : settings.metricsPort());
        if (eventLoopPollMicros != null) {
            options = options.withEventLoopPoll(Duration.ofNanos(eventLoopPollMicros * 1000L));
        }
        Extender extender;
        try {
            extender = Extender.start(settings, options, Optional.ofNullable(client));
        } catch (IllegalStateException e) {
            System.err.println("hetgpu-scheduler-extender: " + e.getMessage());
            if (client != null) {
                client.close();
            }
            return 1;
        }
        extender.synced().whenComplete((done, failure) -> {
            // The informers retry an API server that is down or refusing for ever (InformerClusterView's handler; fabric8
            // alone would give up on a failed first list), so this fails only when one has stopped for good: /healthz then
            // answers 503 and the kubelet restarts the extender. Say why once.
            if (failure != null) {
                System.err.println("hetgpu-scheduler-extender: an informer has stopped: " + failure.getMessage());
            }
        });
        System.out.println(listening(options, extender.port(), extender.metricsPort())
                + " (API server: " + (client == null ? "none, request-only" : client.getMasterUrl()) + ")");
        var stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            extender.close();
            if (client != null) {
                client.close();
            }
            stopped.countDown();
        }));
        stopped.await();
        return 0;
    }
}
