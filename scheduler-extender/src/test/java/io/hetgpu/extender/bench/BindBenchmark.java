package io.hetgpu.extender.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.MachineLoad;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The bind verb at 5,000 nodes: p50/p99 of one bind (read the pod, choose its GPUs on the node with the filter's rules,
 * record them, create the Binding), in process and over HTTP, one at a time as one kube-scheduler binding goroutine
 * would, and 16 at once. The API server is a stand-in that answers from memory after {@code --api-ms} (0, then 2 by
 * default): with 0 the figure is the extender's own work; with 2 it shows what a real API server's round trips add,
 * and what the one-bind-per-node-at-a-time rule costs a burst to one node. Not a test.
 *
 * <pre>
 *   ./hetgpu bench bind [--nodes 5000] [--binds 20000] [--api-ms 0,2]
 * </pre>
 *
 * <p>Each pod asks for one GPU (the PyTorch worker fixture, its card list removed) and is bound to the next GPU node in
 * turn; the cluster view never shows the pods bound, so each bind's devices stay reserved as in the moment before the
 * informer catches up, the case that costs most. A bind that finds the node full (no_fit) is refused: refusals are
 * counted and timed apart from the binds (they skip the record and the Binding, so mixed in they would flatter p50),
 * and the verb's log line for each is kept below the benchmark's output (warnings only).
 */
@Command(name = "./hetgpu bench bind", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class, sortOptions = false,
        description = "The bind verb: p50/p99 per bind, in process and over HTTP, one at a time and 16 at once, the API server stood in.",
        footer = "Figures, not pass/fail; refused binds (no_fit) are timed apart.")
public final class BindBenchmark implements Callable<Integer> {

    private static final int PORT = 18898;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "5000", description = "nodes in the generated cluster (default: ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--binds", paramLabel = "N", defaultValue = "20000", description = "binds per row (default: ${DEFAULT-VALUE})")
    int binds;

    @Option(names = "--api-ms", paramLabel = "MS", split = ",", defaultValue = "0,2",
            description = "the stand-in API server's delay per call, one set of rows each (default: ${DEFAULT-VALUE})")
    int[] latencies;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        BenchCommandLine.run(new BindBenchmark(), args);
    }

    @Override
    public Integer call() throws Exception {
        BenchCommandLine.require(spec, size >= 1, "--nodes must be at least 1, got " + size);
        BenchCommandLine.require(spec, binds >= 1, "--binds must be at least 1, got " + binds);
        BenchCommandLine.require(spec, Arrays.stream(latencies).allMatch(ms -> ms >= 0), "--api-ms must be 0 or more, got "
                + Arrays.toString(latencies));
        // One log line per refused bind would bury the figures: the benchmark shows warnings only.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        var cluster = new BenchCluster(size, 42);
        var gpuNodes = cluster.names.stream().filter(name -> cluster.facts.get(name).inventory() != null).toList();
        var pod = KubeJson.read("pod-pytorch-worker.json", Pod.class);
        pod.getMetadata().getAnnotations().remove("hetgpu.io/gpu-models");
        pod.getMetadata().getAnnotations().remove("hetgpu.io/min-gpu-memory");
        pod.getSpec().getContainers().forEach(container -> {
            container.getResources().getLimits().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("1"));
            container.getResources().getRequests().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("1"));
        });
        System.out.println("machine: " + MachineLoad.processor());
        System.out.printf("%d nodes (%d with GPUs), %d binds per row, 1-GPU pods, each to the next GPU node in turn%n",
                size, gpuNodes.size(), binds);
        // Warm-up, not printed: the JIT compiles the bind path and the HTTP server's.
        for (var mode : List.of(Mode.IN_PROCESS, Mode.HTTP)) {
            var api = new StandInApi(pod, 0);
            mode.run(verbs(cluster, api), gpuNodes, binds, api);
        }
        System.out.printf("%-40s %8s %8s %9s %8s %11s %11s %6s %6s%n", "", "p50 ms", "p99 ms", "binds/s", "no_fit", "no_fit p50",
                "no_fit p99", "load", "steal");
        for (int apiMs : latencies) {
            for (var mode : Mode.values()) {
                // A fresh extender per row: each starts with the cluster's free GPUs and no reservations.
                var api = new StandInApi(pod, apiMs * 1_000_000L);
                var interval = MachineLoad.start();
                var row = mode.run(verbs(cluster, api), gpuNodes, binds, api);
                System.out.printf("%-40s %8.3f %8.3f %9.0f %8d %11.3f %11.3f %6s %6s%n", mode.label + ", API " + apiMs + " ms", row.p50(),
                        row.p99(), row.perSecond(), row.noFit(), row.refusedP50(), row.refusedP99(), MachineLoad.loadAverage(), interval.steal());
            }
        }
        return 0;
    }

    private static ExtenderVerbs verbs(BenchCluster cluster, StandInApi api) {
        return ExtenderVerbs.of(cluster.view(), new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()),
                new NodeStateFactory(CardCatalog.defaults(), "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (p, table) -> { }, advice -> { }, api, report -> { });
    }

    private enum Mode {
        IN_PROCESS("in process, one at a time"),
        HTTP("HTTP, one at a time"),
        HTTP_16("HTTP, 16 at once"),
        HTTP_16_ONE_NODE("HTTP, 16 at once to one node");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        Row run(ExtenderVerbs verbs, List<String> gpuNodes, int binds, StandInApi api) throws Exception {
            var outcomes = new ConcurrentHashMap<Integer, BindVerb.Outcome>();
            var timings = new long[binds];
            var next = new AtomicInteger();
            Vertx vertx = null;
            HttpClient http = null;
            if (this != IN_PROCESS) {
                vertx = Vertx.vertx();
                ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", PORT, 1 << 20, null, null), verbs, new ExtenderMetrics())
                        .toCompletionStage().toCompletableFuture().join();
                http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            }
            int clients = this == HTTP_16 || this == HTTP_16_ONE_NODE ? 16 : 1;
            var client = http;
            var pool = Executors.newFixedThreadPool(clients);
            long started = System.nanoTime();
            try {
                var work = new ArrayList<Future<?>>();
                for (int c = 0; c < clients; c++) {
                    work.add(pool.submit(() -> {
                        for (int i = next.getAndIncrement(); i < binds; i = next.getAndIncrement()) {
                            // One node takes eight pods at most: "one node" binds go to a node of the next eight.
                            var node = this == HTTP_16_ONE_NODE ? gpuNodes.get((i / 8) % gpuNodes.size()) : gpuNodes.get(i % gpuNodes.size());
                            var name = "pod-" + i;
                            long t0 = System.nanoTime();
                            if (client == null) {
                                var result = verbs.binding().bind(new ExtenderBindingArgs(name, "default", api.uid(name), node));
                                outcomes.put(i, result.error().isEmpty() ? BindVerb.Outcome.BOUND : BindVerb.Outcome.NO_FIT);
                            } else {
                                var body = "{\"PodName\":\"" + name + "\",\"PodNamespace\":\"default\",\"PodUID\":\"" + api.uid(name)
                                        + "\",\"Node\":\"" + node + "\"}";
                                var answer = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORT + "/bind"))
                                        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json").build(),
                                        HttpResponse.BodyHandlers.ofString()).body();
                                outcomes.put(i, answer.contains("\"Error\":\"\"") || !answer.contains("Error")
                                        ? BindVerb.Outcome.BOUND : BindVerb.Outcome.NO_FIT);
                            }
                            timings[i] = System.nanoTime() - t0;
                        }
                        return null;
                    }));
                }
                for (var future : work) {
                    future.get();
                }
            } finally {
                pool.shutdownNow();
                if (vertx != null) {
                    vertx.close().toCompletionStage().toCompletableFuture().join();
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            var bound = new ArrayList<Long>();
            var refused = new ArrayList<Long>();
            outcomes.forEach((i, outcome) -> (outcome == BindVerb.Outcome.BOUND ? bound : refused).add(timings[i]));
            var boundTimes = bound.stream().mapToLong(Long::longValue).toArray();
            var refusals = refused.stream().mapToLong(Long::longValue).toArray();
            return new Row(Percentiles.millis(boundTimes, boundTimes.length, 50), Percentiles.millis(boundTimes, boundTimes.length, 99),
                    boundTimes.length / seconds, refusals.length,
                    Percentiles.millis(refusals, refusals.length, 50), Percentiles.millis(refusals, refusals.length, 99));
        }
    }

    /** Binds that bound (timed, counted per second) and binds refused for a full node (counted and timed apart). */
    private record Row(double p50, double p99, double perSecond, int noFit, double refusedP50, double refusedP99) {
    }

    /** The API server's side of a bind, from memory: each call waits {@code latencyNanos}, as a round trip would. */
    private static final class StandInApi implements PodBinder {
        private final Pod template;
        private final long latencyNanos;
        private final Map<String, Pod> pods = new ConcurrentHashMap<>();

        StandInApi(Pod template, long latencyNanos) {
            this.template = template;
            this.latencyNanos = latencyNanos;
        }

        String uid(String name) {
            return "uid-" + name;
        }

        @Override
        public Pod pod(String namespace, String name) {
            roundTrip();
            return pods.computeIfAbsent(name, n -> new io.fabric8.kubernetes.api.model.PodBuilder(template).editMetadata()
                    .withName(n).withNamespace(namespace).withUid(uid(n)).withResourceVersion("1").endMetadata().build());
        }

        @Override
        public void annotate(String namespace, String name, String resourceVersion, String key, String value) {
            roundTrip();
        }

        @Override
        public void removeAnnotation(String namespace, String name, String key, String value) {
            roundTrip();
        }

        @Override
        public void bind(String namespace, String name, String uid, String node) {
            roundTrip();
        }

        private void roundTrip() {
            if (latencyNanos > 0) {
                LockSupport.parkNanos(latencyNanos);
            }
        }
    }
}
