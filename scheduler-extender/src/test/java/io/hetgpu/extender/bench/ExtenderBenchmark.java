package io.hetgpu.extender.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.WholeJobs;
import io.hetgpu.extender.explain.PlacementEvents;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.http.PollingEventLoops;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.MachineLoad;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.tier.CardCatalog;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Drives the hetgpu extender and a Go floor (by default the project's own, {@code scheduler-extender/bench/extender-floor}:
 * Go's net/http and encoding/json reading the request, keeping every node and scoring it 0) over HTTP with the same
 * kube-scheduler-shaped requests, one connection and one request at a time as kube-scheduler does, and prints p50/p99
 * per verb, requests/s, payload sizes and hetgpu/floor ratios, each row beside the load average it was taken at and
 * the share of the machine's CPU time its hypervisor took while the two targets were timed (steal). Every ratio is of
 * two figures from the same run. Not a test. {@code ./hetgpu bench extender --help} lists the options.
 *
 * <p>With {@code --dra} the extender also holds the cluster's DRA copy ({@link BenchDraCluster}: GPUs only in NVIDIA's
 * ResourceSlices, the pod's in a claim), and a third target, the same extender answering the DRA pod on its own
 * connection, takes its turns beside the device-plugin pod and the floor; the DRA/device-plugin ratio is printed.
 *
 * <p>The soak ({@code --soak CLIENTS}) has that many clients send filter and prioritize for the largest size
 * without pause (node names, as the shipped nodeCacheCapable configuration sends; {@code --forms Nodes,NodeNames}
 * alternates the forms between clients), for {@code --soak-seconds} (60 by default), while
 * a probe asks {@code /healthz} four times a second with a 1 s timeout as the kubelet would. A 429 is retried after its
 * Retry-After, as kube-scheduler retries a failed attempt; a request is lost when it fails otherwise or is not
 * answered within 30 s. It prints requests answered, refused and lost, p50/p99 per answered request, the probe's
 * slowest answer, and the extender's peak RSS (VmHWM).
 *
 * Every case is first run once unmeasured (5 s per target), then measured after its own 5 s warm-up, the two targets
 * timed in turn, half a second each after a tenth of a second untimed, so that a while the machine runs slower falls on
 * both.
 * The extender runs in a child JVM (mode {@code serve}) holding the generated cluster as its informer
 * cache would, so the client's garbage never lands on the server's clock.
 */
@Command(name = "./hetgpu bench extender", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class, sortOptions = false,
        subcommands = ExtenderBenchmark.Serve.class,
        description = "The extender against a Go floor that does no work, over HTTP with kube-scheduler's requests: p50/p99 per verb, "
                + "requests/s, payload sizes, and the ratio of the two from the same run.",
        footer = "Figures, not pass/fail; each row is printed with the one-minute load average it was taken at and the share "
                + "of CPU time the hypervisor stole while it ran.")
public final class ExtenderBenchmark implements Callable<Integer> {

    /** A pod shape the timed requests carry. */
    enum PodShape {
        /** the same pod every time, as for the pods of one job */
        SAME,
        /** two pods of different shapes in turn, so that the extender's assessments from the previous pod never apply (its slow path) */
        ALTERNATING,
        /** the first pod of a 16-pod job whose plan ends at once, so that every filter plans the whole job */
        JOB16;

        String flag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Who sends the timed requests. */
    enum ClientKind { GO, NETTY, JDK }

    /** The two forms of a request's nodes. */
    enum Form { Nodes, NodeNames }

    private static final long SEED = 42;
    static final int HETGPU_PORT = 18899;
    /** The probes' and metrics' port, as the shipped Deployment has one (--metrics-port) and kubelet probes it. */
    static final int HETGPU_METRICS_PORT = 18900;
    private static final int FLOOR_PORT = 18888;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--sizes", paramLabel = "N", split = ",", defaultValue = "100,1000,5000",
            description = "cluster sizes, in nodes (default: ${DEFAULT-VALUE})")
    int[] sizes;

    @Option(names = "--forms", paramLabel = "FORM", split = ",",
            description = "Nodes (whole nodes, nodeCacheCapable: false) and/or NodeNames (default: both; NodeNames for the soak)")
    List<Form> forms;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "20",
            description = "measured seconds per size and form, for each target, after a 5 s warm-up (default: ${DEFAULT-VALUE})")
    double seconds;

    @Option(names = "--pods", paramLabel = "SHAPE", defaultValue = "same",
            description = "same: one pod shape; alternating: two in turn, so that no assessment is remembered; job16: a pod of a "
                    + "16-pod job whose plan ends at once, so that every filter plans the whole job (default: ${DEFAULT-VALUE})")
    PodShape pods;

    @Option(names = "--dra",
            description = "also the same cluster as a DRA cluster has it (GPUs published only in ResourceSlices of NVIDIA's driver, "
                    + "some allocated to claims) and the pod asking its GPUs through a claim: timed in turn with the device-plugin "
                    + "pod, which then asks no NVLink either, and the floor; their ratio printed")
    boolean dra;

    @Option(names = "--floor", paramLabel = "DIR", defaultValue = "scheduler-extender/bench/extender-floor",
            description = "the Go floor's main package, which ./hetgpu builds and this runs (default: ${DEFAULT-VALUE})")
    String floor;

    @Option(names = "--server-jvm", paramLabel = "OPTS", description = "the extender's JVM options (default: the Deployment's)")
    String serverJvmOptions;

    @Option(names = "--event-loop-poll-us", paramLabel = "N",
            description = "how long the extender's event loops poll before they sleep, as its flag of that name sets it "
                    + "(default: the extender's own, 100; 0 sleeps at once)")
    Long pollMicros;

    @Option(names = "--client", paramLabel = "CLIENT", defaultValue = "go",
            description = "who sends the timed requests: go, Go's net/http as kube-scheduler's HTTPExtender sends them "
                    + "(scheduler-extender/bench/extender-client); netty, in this JVM; jdk, the JDK's java.net.http, which adds "
                    + "about 0.1 ms of its own to every request of both targets (default: ${DEFAULT-VALUE})")
    ClientKind clientKind;

    @Option(names = "--soak", paramLabel = "CLIENTS", defaultValue = "0",
            description = "instead: CLIENTS clients at once on the largest size, no floor")
    int soakClients;

    @Option(names = "--soak-seconds", paramLabel = "S", defaultValue = "60", description = "how long the soak runs (default: ${DEFAULT-VALUE})")
    double soakSeconds;

    @Option(names = "--jobs",
            description = "instead of the comparison: whole jobs of up to 10,000 pods over 1,000 nodes, in process, in the shipped "
                    + "extender's JVM: the filter that plans each job, its other pods' filters, a pod of no job after it, the heap a held plan keeps")
    boolean jobs;

    /** Built by ./hetgpu from --floor. */
    @Option(names = "--floor-binary", hidden = true, defaultValue = "/tmp/extender-floor")
    String floorBinary;

    /** Built by ./hetgpu from scheduler-extender/bench/extender-client. */
    @Option(names = "--client-binary", hidden = true)
    String clientBinary;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        BenchCommandLine.run(new ExtenderBenchmark(), args);
    }

    /** {@link JobScaleBenchmark} in a JVM of {@code serverJvm}'s options, its output this one's. */
    private static int jobScale(List<String> serverJvm) throws Exception {
        var command = new ArrayList<String>(List.of(ProcessHandle.current().info().command().orElse("java")));
        command.addAll(List.of("-XX:+IgnoreUnrecognizedVMOptions", "--sun-misc-unsafe-memory-access=allow"));
        command.addAll(serverJvm);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), JobScaleBenchmark.class.getName()));
        System.out.println("machine: " + MachineLoad.processor());
        System.out.println("hetgpu extender JVM: " + String.join(" ", serverJvm));
        return new ProcessBuilder(command).inheritIO().start().waitFor();
    }

    /** The child process the benchmark starts: the extender alone, serving until the benchmark stops it. */
    @Command(name = "serve", hidden = true, description = "the extender with the generated cluster as its node cache (the benchmark's child process)")
    static final class Serve implements Callable<Integer> {

        @Parameters(index = "0", paramLabel = "NODES", description = "nodes in the generated cluster")
        int size;

        @Parameters(index = "1", paramLabel = "PODS", description = "the pod shape the requests will carry: ${COMPLETION-CANDIDATES}")
        PodShape pods;

        @Parameters(index = "2", paramLabel = "POLL_US", description = "how long the event loops poll before they sleep, in µs")
        long pollMicros;

        @Option(names = "--dra", description = "the cluster's DRA copy beside it")
        boolean dra;

        @Override
        public Integer call() throws InterruptedException {
            serve(size, pods == PodShape.JOB16, dra, Duration.ofNanos(pollMicros * 1000));
            new CountDownLatch(1).await();
            return 0;
        }
    }

    @Override
    public Integer call() throws Exception {
        BenchCommandLine.require(spec, Arrays.stream(sizes).allMatch(size -> size >= 1), "--sizes must each be at least 1, got "
                + Arrays.toString(sizes));
        BenchCommandLine.require(spec, seconds > 0, "--seconds must be more than 0, got " + seconds);
        BenchCommandLine.require(spec, soakClients >= 0, "--soak must be 0 (no soak) or more, got " + soakClients);
        BenchCommandLine.require(spec, soakSeconds > 0, "--soak-seconds must be more than 0, got " + soakSeconds);
        BenchCommandLine.require(spec, !dra || pods == PodShape.SAME && soakClients == 0 && !jobs,
                "--dra times one pod shape (--pods same) beside its device-plugin twin, not with --soak or --jobs; got --pods " + pods.flag()
                        + (soakClients > 0 ? " --soak " + soakClients : "") + (jobs ? " --jobs" : ""));
        BenchCommandLine.require(spec, pollMicros == null || pollMicros >= 0, "--event-loop-poll-us must be 0 or more, got " + pollMicros);
        BenchCommandLine.require(spec, clientKind != ClientKind.GO || clientBinary != null || soakClients > 0 || jobs,
                "--client go needs --client-binary (./hetgpu bench extender builds it from scheduler-extender/bench/extender-client)");
        // The JVM of manifests/base/hetgpu-scheduler.yaml: a heap of 60% of its 1536Mi limit from the start and the capped
        // native pools, as the Deployment's JAVA_TOOL_OPTIONS set them, and the serial collector that the JVM picks by
        // itself in a container with under 1792 MB.
        var serverJvm = serverJvmOptions != null ? List.of(serverJvmOptions.split(" "))
                : List.of("-Xms922m", "-Xmx922m", "-XX:+UseSerialGC", "-XX:MaxMetaspaceSize=128m", "-XX:ReservedCodeCacheSize=64m",
                        "-XX:MaxDirectMemorySize=128m", "-XX:+ExitOnOutOfMemoryError");
        if (jobs) {
            return jobScale(serverJvm);
        }
        long pollMicros = this.pollMicros != null ? this.pollMicros : ServerOptions.DEFAULT_EVENT_LOOP_POLL.toNanos() / 1000;
        int largest = Arrays.stream(sizes).max().orElseThrow();
        // The soak sends what the shipped configuration (nodeCacheCapable: true) has kube-scheduler send.
        var forms = (this.forms != null ? this.forms : soakClients > 0 ? List.of(Form.NodeNames) : List.of(Form.values()))
                .stream().map(Form::name).toList();
        var java = ProcessHandle.current().info().command().orElse("java");
        var command = new ArrayList<String>(List.of(java));
        // As the image's ENTRYPOINT: Netty's sun.misc.Unsafe use allowed, so JDK 23+ prints no warning.
        command.addAll(List.of("-XX:+IgnoreUnrecognizedVMOptions", "--sun-misc-unsafe-memory-access=allow"));
        command.addAll(serverJvm);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), ExtenderBenchmark.class.getName(), "serve",
                Integer.toString(largest), pods.flag(), Long.toString(pollMicros)));
        if (dra) {
            command.add("--dra");
        }
        System.out.println("machine: " + MachineLoad.processor());
        System.out.println("hetgpu extender JVM: " + String.join(" ", serverJvm) + "; event loops poll " + pollMicros
                + " µs before they sleep, after an answer of at most 32 KiB and between the pieces of a body");
        var server = new ProcessBuilder(command).inheritIO();
        server.environment().put("MALLOC_ARENA_MAX", "2");
        var hetgpu = server.start();
        if (soakClients > 0) {
            try {
                var client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
                waitFor(client, "http://127.0.0.1:" + HETGPU_PORT + "/readyz");
                Soak.run(client, new BenchCluster(largest, SEED), largest, forms, soakClients, soakSeconds, hetgpu.pid());
            } finally {
                hetgpu.destroy();
            }
            return 0;
        }
        var floorServer = new ProcessBuilder(floorBinary, "-addr", "127.0.0.1:" + FLOOR_PORT).inheritIO().start();
        try (var netty = new BenchClient();
             var jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build()) {
            waitFor(jdk, "http://127.0.0.1:" + HETGPU_PORT + "/readyz");
            Post client = clientKind == ClientKind.JDK ? (port, path, body) -> post(jdk, port, path, body).body()
                    : (port, path, body) -> netty.post(port, path, io.vertx.core.buffer.Buffer.buffer(body));
            var go = clientKind == ClientKind.GO ? new GoClient(clientBinary) : null;
            System.out.println("client: " + switch (clientKind) {
                case GO -> "Go's net/http, as kube-scheduler's HTTPExtender (" + clientBinary + ")";
                case JDK -> "the JDK's java.net.http";
                case NETTY -> "Netty's (Vert.x)";
            } + ", one kept-alive connection per target, one request at a time");
            System.out.println("floor: Go's, built from " + floor);
            var cluster = new BenchCluster(largest, SEED);
            var draCluster = dra ? new BenchDraCluster(largest, SEED) : null;
            var firstBody = ("{\"Pod\":" + measuredPod(pods) + ",\"Nodes\":null,\"NodeNames\":"
                    + BenchCluster.json(cluster.names.subList(0, Math.min(100, largest))) + "}").getBytes(StandardCharsets.UTF_8);
            // A client's first request loads the client's own classes: timed, that was 0.3 s of the first filter's 0.5-0.6 s
            // here (curl's first filter took 0.14 s). kube-scheduler's client is warm when a new extender gets its first
            // pod; this one warms on the floor.
            warmOn(client, FLOOR_PORT, firstBody);
            // What the first pod after a restart waits for: the extender's first request, once it says it is ready.
            long firstStart = System.nanoTime();
            client.post(HETGPU_PORT, "/filter", firstBody);
            System.out.printf("hetgpu's first filter once ready (100 node names, a new connection): %.1f ms%n",
                    (System.nanoTime() - firstStart) / 1e6);
            System.out.printf("%-6s %-9s %-6s %-10s %9s %9s %8s %11s %11s %6s %6s%n",
                    "nodes", "form", "target", "verb", "p50 ms", "p99 ms", "req/s", "req bytes", "resp bytes", "load", "steal");
            // A first pass over every case, measuring nothing: a JVM's first seconds (class loading, heap
            // sizing, compilation) are not the steady state kube-scheduler meets, and without this pass they
            // fall on whichever case is measured first. Both targets get the same pass.
            for (boolean measure : new boolean[] {false, true}) {
                for (int size : sizes) {
                    for (var form : forms) {
                        run(client, go, cluster, draCluster, size, form, seconds, pods, measure);
                    }
                }
            }
        } finally {
            hetgpu.destroy();
            floorServer.destroy();
        }
        return 0;
    }

    /** One request, answered 200; its answer's body. */
    @FunctionalInterface
    private interface Post {
        byte[] post(int port, String path, byte[] body) throws Exception;
    }

    /**
     * @param client sends the requests that set the case up (hetgpu's filter answer makes the prioritize bodies), and
     *               the timed ones where {@code go} is null
     * @param dra    the cluster's DRA copy, whose pod is timed beside the device-plugin pod; null for none
     */
    private static void run(Post client, GoClient go, BenchCluster cluster, BenchDraCluster dra, int size, String form, double seconds,
                            PodShape pods, boolean measure) throws Exception {
        boolean alternating = pods == PodShape.ALTERNATING;
        var training = measuredPod(pods);
        if (dra != null) {
            training = BenchDraCluster.pluginPod(training);
        }
        var small = training.replace("\"hetgpu.io/gpu-models\": \"V100,A100,H100\",", "")
                .replace("\"hetgpu.io/interconnect\": \"nvlink\",", "").replace("\"nvidia.com/gpu\": \"4\"", "\"nvidia.com/gpu\": \"2\"");
        var plugin = requests(client, alternating ? List.of(training, small) : List.of(training), form, size, cluster.names, cluster.nodeJson);
        // Each target with its bodies: hetgpu the device-plugin pod, [hetgpu the DRA pod,] the floor the device-plugin pod.
        var ports = dra == null ? List.of(HETGPU_PORT, FLOOR_PORT) : List.of(HETGPU_PORT, HETGPU_PORT, FLOOR_PORT);
        var targets = dra == null ? List.of("hetgpu", "floor") : List.of("hetgpu", "dra", "floor");
        var cases = dra == null ? List.of(plugin, plugin)
                : List.of(plugin, requests(client, List.of(BenchDraCluster.draPod(training)), form, size, dra.names, dra.nodeJson), plugin);

        // The targets timed in turn, half a second each: a slower while on the host falls on all.
        var interval = MachineLoad.start();
        var filterBodies = cases.stream().map(Requests::filters).toList();
        var prioritizeBodies = cases.stream().map(Requests::prioritizes).toList();
        var measured = go != null ? go.rounds(ports, filterBodies, prioritizeBodies, measure ? seconds : 0)
                : inThisJvm(client, ports, filterBodies, prioritizeBodies, measure ? seconds : 0);
        var steal = interval.steal();
        if (!measure) {
            return;
        }
        var results = new ArrayList<double[]>();
        for (int t = 0; t < ports.size(); t++) {
            var rounds = measured.get(t);
            var filter = rounds.filter();
            var prioritize = rounds.prioritize();
            var both = new ArrayList<Double>(filter.size());
            for (int i = 0; i < filter.size(); i++) {
                both.add(filter.get(i) + prioritize.get(i));
            }
            long filterBytes = rounds.filterBytes();
            long prioritizeBytes = rounds.prioritizeBytes();
            var target = targets.get(t);
            var filterBody = cases.get(t).filters().getFirst();
            var prioritizeBody = cases.get(t).prioritizes().getFirst();
            print(size, form, target, "filter", filter, filterBody.length, filterBytes, steal);
            print(size, form, target, "prioritize", prioritize, prioritizeBody.length, prioritizeBytes, steal);
            print(size, form, target, "both", both, filterBody.length + prioritizeBody.length, filterBytes + prioritizeBytes, steal);
            results.add(new double[] {Percentiles.of(both, 50), Percentiles.of(both, 99)});
        }
        var floor = results.getLast();
        System.out.printf("%-6d %-9s ratio hetgpu/floor (filter+prioritize): p50 %.2f, p99 %.2f  (%d of %d nodes pass filter; %s; load %s, steal %s)%n",
                size, form, results.get(0)[0] / floor[0], results.get(0)[1] / floor[1], plugin.kept(), size,
                switch (pods) {
                    case ALTERNATING -> "two pod shapes in turn";
                    case JOB16 -> "a pod of a 16-pod job, planned whole at each filter";
                    case SAME -> dra == null ? "one pod shape" : "one pod shape, no NVLink asked";
                }, MachineLoad.loadAverage(), steal);
        if (dra != null) {
            System.out.printf("%-6d %-9s ratio DRA/device plugin (hetgpu, filter+prioritize): p50 %.2f, p99 %.2f  (DRA/floor p50 %.2f, p99 %.2f; "
                            + "%d of %d DRA nodes pass filter)%n",
                    size, form, results.get(1)[0] / results.get(0)[0], results.get(1)[1] / results.get(0)[1], results.get(1)[0] / floor[0],
                    results.get(1)[1] / floor[1], cases.get(1).kept(), size);
        }
        System.out.println();
    }

    /** One target's requests: a filter body per pod, the prioritize of the nodes hetgpu's filter kept, and how many it kept of the first. */
    private record Requests(List<byte[]> filters, List<byte[]> prioritizes, int kept) {
    }

    /** The filter of each pod over the first {@code size} nodes, and its prioritize of hetgpu's survivors, as kube-scheduler sends them. */
    private static Requests requests(Post client, List<String> podsInTurn, String form, int size, List<String> names, List<String> nodeJson)
            throws Exception {
        var filterBodies = new ArrayList<byte[]>();
        var prioritizeBodies = new ArrayList<byte[]>();
        int kept = -1;
        for (var pod : podsInTurn) {
            String filterBody;
            if (form.equals("Nodes")) {
                filterBody = "{\"Pod\":" + pod + ",\"Nodes\":{\"metadata\":{},\"items\":[" + String.join(",", nodeJson.subList(0, size)) + "]},\"NodeNames\":null}";
            } else {
                filterBody = "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + BenchCluster.json(names.subList(0, size)) + "}";
            }
            // kube-scheduler prioritizes the nodes that passed filter: every target gets hetgpu's survivors.
            // Encoded once, so that no target's clock holds the client's encoding.
            var encoded = filterBody.getBytes(StandardCharsets.UTF_8);
            var answer = client.post(HETGPU_PORT, "/filter", encoded);
            var filtered = JSON.readTree(answer);
            if (!filtered.has(form)) {
                throw new IllegalStateException("hetgpu's filter of " + size + " " + form + " answered without " + form + ": "
                        + new String(answer, 0, Math.min(answer.length, 500), StandardCharsets.UTF_8));
            }
            filterBodies.add(encoded);
            prioritizeBodies.add((form.equals("Nodes")
                    ? "{\"Pod\":" + pod + ",\"Nodes\":" + filtered.get("Nodes") + ",\"NodeNames\":null}"
                    : "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + filtered.get("NodeNames") + "}").getBytes(StandardCharsets.UTF_8));
            if (kept < 0) {
                kept = form.equals("Nodes") ? filtered.get("Nodes").get("items").size() : filtered.get("NodeNames").size();
            }
        }
        return new Requests(filterBodies, prioritizeBodies, kept);
    }

    /** The pod each case sends first: the training pod, or the first member of the 16-pod job. */
    private static String measuredPod(PodShape pods) {
        return pods == PodShape.JOB16 ? BenchJob.member(0) : BenchJob.TRAINING;
    }

    /** One target's rounds: each round's filter and prioritize times in ms, and the sizes of the last answers. */
    record Rounds(List<Double> filter, List<Double> prioritize, long filterBytes, long prioritizeBytes) {
    }

    /** How long each target is timed before the other's turn, and how much of each turn goes untimed first. */
    private static final long TURN_NANOS = 500_000_000L;
    private static final long REWARM_NANOS = 100_000_000L;

    /**
     * The rounds sent by this JVM's client, as Go's client sends them: 5 s untimed to each target (at least 3 rounds),
     * then {@code seconds} timed for each (at least 10 rounds), the targets taking turns of half a second, each turn
     * starting with a tenth of a second untimed. Their rounds, in the order of the ports.
     *
     * @param filterBodies each port's filter bodies, in the order of the ports
     */
    private static List<Rounds> inThisJvm(Post client, List<Integer> ports, List<List<byte[]>> filterBodies,
                                          List<List<byte[]>> prioritizeBodies, double seconds) throws Exception {
        var targets = java.util.stream.IntStream.range(0, ports.size())
                .mapToObj(t -> new Target(ports.get(t), filterBodies.get(t), prioritizeBodies.get(t))).toList();
        for (var target : targets) {
            long warmUntil = System.nanoTime() + 5_000_000_000L;
            for (int warm = 0; warm < 3 || System.nanoTime() < warmUntil; warm++) {
                target.round(client, false);
            }
        }
        long budget = (long) (seconds * 1e9);
        for (boolean more = seconds > 0; more; ) {
            more = false;
            for (var target : targets) {
                if (target.done(budget)) {
                    continue;
                }
                more = true;
                long rewarmUntil = System.nanoTime() + REWARM_NANOS;
                do {
                    target.round(client, false);
                } while (System.nanoTime() < rewarmUntil);
                long turnUntil = System.nanoTime() + TURN_NANOS;
                while (System.nanoTime() < turnUntil && !target.done(budget)) {
                    target.round(client, true);
                }
            }
        }
        return targets.stream().map(Target::rounds).toList();
    }

    /** One target's connection as this JVM's client holds it, and its timed rounds so far. */
    private static final class Target {
        private final int port;
        private final List<byte[]> filterBodies;
        private final List<byte[]> prioritizeBodies;
        private final List<Double> filter = new ArrayList<>();
        private final List<Double> prioritize = new ArrayList<>();
        private long timedNanos;
        private long filterBytes;
        private long prioritizeBytes;
        private int next;
        private int dropped;

        Target(int port, List<byte[]> filterBodies, List<byte[]> prioritizeBodies) {
            this.port = port;
            this.filterBodies = filterBodies;
            this.prioritizeBodies = prioritizeBodies;
        }

        boolean done(long budgetNanos) {
            return timedNanos >= budgetNanos && filter.size() >= 10;
        }

        void round(Post client, boolean timed) throws Exception {
            int which = next++ % filterBodies.size();
            long t0 = System.nanoTime();
            byte[] f;
            byte[] p;
            long t1;
            try {
                f = client.post(port, "/filter", filterBodies.get(which));
                t1 = System.nanoTime();
                p = client.post(port, "/prioritize", prioritizeBodies.get(which));
            } catch (java.io.IOException e) {
                // A kept-alive connection the JDK client dropped ("Data received while in pool"): the round measures the
                // client, not the target; leave it out.
                if (timed && ++dropped > 10) {
                    throw e;
                }
                return;
            }
            long t2 = System.nanoTime();
            if (timed) {
                filter.add((t1 - t0) / 1e6);
                prioritize.add((t2 - t1) / 1e6);
                timedNanos += t2 - t0;
                filterBytes = f.length;
                prioritizeBytes = p.length;
            }
        }

        Rounds rounds() {
            return new Rounds(filter, prioritize, filterBytes, prioritizeBytes);
        }
    }

    /** req/s is what one connection sustains for that verb alone (for "both": filter+prioritize rounds, i.e. pods/s). */
    private static void print(int size, String form, String target, String verb, List<Double> samples, long requestBytes, long responseBytes,
                              String steal) {
        double totalMs = samples.stream().mapToDouble(Double::doubleValue).sum();
        System.out.printf("%-6d %-9s %-6s %-10s %9.2f %9.2f %8.1f %11d %11d %6s %6s%n", size, form, target, verb,
                Percentiles.of(samples, 50), Percentiles.of(samples, 99), samples.size() * 1000 / totalMs, requestBytes, responseBytes,
                MachineLoad.loadAverage(), steal);
    }


    private static HttpResponse<byte[]> post(HttpClient client, int port, String path, byte[] body) throws Exception {
        var response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(path + " on port " + port + " answered " + response.statusCode() + ": "
                    + new String(response.body(), 0, Math.min(300, response.body().length)));
        }
        return response;
    }

    /** Sends {@code body} to {@code port}'s filter until it answers, for at most 10 s: the floor takes a moment to listen. */
    private static void warmOn(Post client, int port, byte[] body) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                client.post(port, "/filter", body);
                return;
            } catch (java.io.IOException | io.vertx.core.VertxException e) {
                if (attempt == 100) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    static void waitFor(HttpClient client, String url) throws InterruptedException {
        for (int attempt = 0; attempt < 600; attempt++) {
            try {
                if (client.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(url + " never became ready");
    }

    /**
     * The child process: the extender with the generated cluster as its node cache; with {@code job}, the 16 pods of
     * {@link BenchJob} in its pod cache too, and job plans that end as soon as they are made; with {@code dra}, the
     * cluster's DRA copy ({@link BenchDraCluster}) beside it, as the informers of a cluster serving {@code resource.k8s.io/v1}
     * hold it.
     */
    private static void serve(int size, boolean job, boolean dra, Duration poll) {
        var cluster = new BenchCluster(size, SEED);
        var catalog = CardCatalog.defaults();
        var metrics = new ExtenderMetrics();
        var log = PlacementEvents.logOnly();
        var draCluster = dra ? new BenchDraCluster(size, SEED) : null;
        var nodes = dra ? draCluster.view(cluster) : cluster.view();
        var view = job ? BenchJob.view(nodes) : nodes;
        // Where the cluster serves resource.k8s.io/v1 the extender reads every pod's claims from its DRA informers.
        var parser = dra ? new PodRequestParser("nvidia.com/gpu", catalog).withDra(draCluster.dra) : new PodRequestParser("nvidia.com/gpu", catalog);
        // What Extender.start wires after each prioritize, less the throttled Kubernetes Event (no API server here).
        BiConsumer<PodRequest, ScoreTable> placed = (pod, table) -> {
            metrics.placed(pod, table, PolicySettings.DEFAULTS.thresholds());
            log.accept(pod, table);
        };
        var jobs = job ? new WholeJobs.Settings(JobSizes.STATED_ONLY, Duration.ofNanos(1), JobHolds.Listener.NONE) : WholeJobs.Settings.DEFAULTS;
        var verbs = ExtenderVerbs.of(view, parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), placed, advice -> { }, PodBinder.NONE, report -> { }, BindVerb.Limits.DEFAULTS, jobs);
        // Whole 5,000-node requests pass 16 MiB and 15,000 nodes are about 85 MB: such clusters raise bodyLimitBytes, as this does.
        var options = new ServerOptions("127.0.0.1", HETGPU_PORT, 256L * 1024 * 1024, null, null)
                .withMetrics("127.0.0.1", HETGPU_METRICS_PORT).withEventLoopPoll(poll);
        ExtenderServer.start(PollingEventLoops.vertx(options.eventLoopPoll()), options, verbs, metrics).toCompletionStage().toCompletableFuture().join();
    }
}
