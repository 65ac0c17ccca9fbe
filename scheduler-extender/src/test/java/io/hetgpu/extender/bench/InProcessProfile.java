package io.hetgpu.extender.bench;

import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.http.ExtenderArgsReader;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.http.WireWriter;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.tier.CardCatalog;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The NodeNames path without HTTP: request reading, filter (answer written) and prioritize (request read,
 * answer written) in a loop over the benchmark's generated cluster, for a profiler to look at without the
 * client's and Vert.x's share. Prints p50/p99 per stage, a first pass (warm-up) and a second. Not a test.
 *
 * <pre>
 *   java -XX:StartFlightRecording=filename=extender.jfr,settings=profile -cp ... \
 *       io.hetgpu.extender.bench.InProcessProfile 5000 6 [15000 [16]]
 *   # names per request, seconds per pass, [nodes in the cluster (default: the names), [MiB written over between calls,
 *   # as the client and the kernel do to the caches between requests over HTTP (default 0)]]
 *   jfr print --events jdk.ExecutionSample extender.jfr
 * </pre>
 */
@Command(name = "InProcessProfile", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = "The NodeNames path without HTTP: p50/p99 per stage and the bytes each allocates, for a profiler to look at.")
public final class InProcessProfile implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAMES", description = "node names per request")
    int size;

    @Parameters(index = "1", paramLabel = "SECONDS", description = "seconds per pass (a warm-up, then a measured one)")
    double seconds;

    @Parameters(index = "2", arity = "0..1", paramLabel = "CLUSTER", description = "nodes in the cluster (default: NAMES)")
    Integer cluster;

    @Parameters(index = "3", arity = "0..1", paramLabel = "EVICT_MIB", defaultValue = "0",
            description = "MiB written over between calls, as the client and the kernel do to the caches between requests over HTTP")
    int evictedMiB;

    @Option(names = "--dra", description = "the DRA pod over the cluster's DRA copy (GPUs in NVIDIA's ResourceSlices, the pod's in a "
            + "claim), the extender holding both, as ./hetgpu bench extender --dra serves them")
    boolean dra;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        BenchCommandLine.run(new InProcessProfile(), args);
    }

    @Override
    public Integer call() throws Exception {
        int clusterSize = cluster != null ? cluster : size;
        BenchCommandLine.require(spec, size >= 1, "NAMES must be at least 1, got " + size);
        BenchCommandLine.require(spec, seconds > 0, "SECONDS must be more than 0, got " + seconds);
        BenchCommandLine.require(spec, clusterSize >= size, "CLUSTER must hold the NAMES asked for, at least " + size + ", got " + clusterSize);
        BenchCommandLine.require(spec, evictedMiB >= 0, "EVICT_MIB must be 0 or more, got " + evictedMiB);
        var cluster = new BenchCluster(clusterSize, 42);
        var draCluster = dra ? new BenchDraCluster(clusterSize, 42) : null;
        var evicted = new long[evictedMiB << 17];
        var catalog = CardCatalog.defaults();
        var parser = dra ? new PodRequestParser("nvidia.com/gpu", catalog).withDra(draCluster.dra) : new PodRequestParser("nvidia.com/gpu", catalog);
        // Wired as the extender wires its verbs (whole jobs on), as the HTTP benchmark's server is.
        var service = ExtenderVerbs.of(dra ? draCluster.view(cluster) : cluster.view(), parser,
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { }).service();
        var reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
        var writer = new WireWriter();
        var pod = KubeJson.text("pod-pytorch-worker.json")
                .replace("\"hetgpu.io/gpu-models\": \"V100,A100\",", "\"hetgpu.io/gpu-models\": \"V100,A100,H100\",")
                .replace("\"hetgpu.io/min-gpu-memory\": \"15Gi\",", "");
        if (!dra) {
            profile("", pod, cluster.names, service, reader, writer, evicted);
            return 0;
        }
        // The DRA pod and its device-plugin twin in turn, each over its own nodes of the one extender.
        for (int round = 0; round < 2; round++) {
            profile("device plugin: ", BenchDraCluster.pluginPod(pod), cluster.names, service, reader, writer, evicted);
            profile("DRA: ", BenchDraCluster.draPod(pod), draCluster.names, service, reader, writer, evicted);
        }
        return 0;
    }

    /** Two passes of reading, filter and prioritize of the pod over the first {@code size} of the names. */
    private void profile(String label, String pod, java.util.List<String> names, io.hetgpu.extender.service.ExtenderService service,
                         ExtenderArgsReader reader, WireWriter writer, long[] evicted) throws Exception {
        var filterBody = ("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + BenchCluster.json(names.subList(0, size)) + "}")
                .getBytes(StandardCharsets.UTF_8);
        var first = service.filter(reader.read(filterBody));
        var prioritizeBody = ("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + BenchCluster.json(first.nodeNames()) + "}")
                .getBytes(StandardCharsets.UTF_8);
        System.out.printf(label + "filter: %d names asked, %d kept (the prioritize's names)%n", size, first.nodeNames().size());
        for (int pass = 0; pass < 2; pass++) {
            long until = System.nanoTime() + (long) (seconds * 1e9);
            var f = new long[2_000_000];
            var p = new long[2_000_000];
            var r = new long[2_000_000];
            int n = 0;
            while (System.nanoTime() < until && n < f.length) {
                evict(evicted);
                long t0 = System.nanoTime();
                var fa = reader.read(filterBody);
                long t1 = System.nanoTime();
                writer.filterResult(service.filter(fa));
                long t2 = System.nanoTime();
                evict(evicted);
                long t3 = System.nanoTime();
                writer.hostPriorities(service.prioritize(reader.read(prioritizeBody)).priorities());
                long t4 = System.nanoTime();
                r[n] = t1 - t0; f[n] = t2 - t1; p[n] = t4 - t3;
                n++;
            }
            var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long a0 = threads.getCurrentThreadAllocatedBytes();
            var fa = reader.read(filterBody);
            long a1 = threads.getCurrentThreadAllocatedBytes();
            writer.filterResult(service.filter(fa));
            long a2 = threads.getCurrentThreadAllocatedBytes();
            writer.hostPriorities(service.prioritize(reader.read(prioritizeBody)).priorities());
            long a3 = threads.getCurrentThreadAllocatedBytes();
            System.out.printf(label + "allocated bytes: read %d, filter+write %d, prioritize+read+write %d%n", a1 - a0, a2 - a1, a3 - a2);
            System.out.printf(label + "size %d n %d read p50 %.3f filter(+write) p50 %.3f p99 %.3f prioritize(+read,write) p50 %.3f p99 %.3f ms%n", size, n,
                    Percentiles.millis(r, n, 50), Percentiles.millis(f, n, 50), Percentiles.millis(f, n, 99),
                    Percentiles.millis(p, n, 50), Percentiles.millis(p, n, 99));
        }
    }

    /** Writes over a span larger than the last-level cache, as the client and the kernel do between requests. */
    private static void evict(long[] span) {
        for (int i = 0; i < span.length; i += 8) {
            span[i]++;
        }
    }
}
