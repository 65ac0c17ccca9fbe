package io.hetgpu.gpu.allocation;

import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.MachineLoad;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.release.ReleaseVersion;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * How long {@link GpuSetAllocator#choose} takes on every shipped profile, per request size, from an
 * allocator built once per topology (as the device plugin and the extender cache it). Prints figures;
 * asserts nothing. Two cases per size: every GPU free (the largest search) and a random half-to-all free
 * with the NVLink requirement on.
 *
 * <pre>./hetgpu bench allocator [PROFILE...]</pre>
 */
@Command(name = "./hetgpu bench allocator", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class, sortOptions = false,
        description = "Microseconds per choice of the GPU set allocator, per request size, on each profile.",
        footer = "Figures, not pass/fail.")
public final class AllocatorBenchmark implements Callable<Integer> {

    private static final int WARM_UP_CALLS = 20_000;
    private static final int MEASURED_CALLS = 2_000;

    @Parameters(paramLabel = "PROFILE", arity = "0..*",
            description = "shipped profiles by name, or profile files by path (default: every shipped profile)")
    List<String> profiles = ProfileLoader.SHIPPED;

    public static void main(String[] args) {
        BenchCommandLine.run(new AllocatorBenchmark(), args);
    }

    @Override
    public Integer call() throws Exception {
        // Every profile read before any is timed: a wrong name fails at once, not after minutes of figures.
        var links = new LinkedHashMap<String, LinkMatrix>();
        for (var name : profiles) {
            links.put(name, ProfileLoader.load(name).links());
        }
        long sink = 0;
        System.out.println("machine: " + MachineLoad.processor() + ", load " + MachineLoad.loadAverage());
        System.out.printf("%-14s %4s | %-28s | %-28s%n", "", "", "all free", "random free, requireNvlink");
        System.out.printf("%-14s %4s | %8s %8s %10s | %8s %8s %10s   (microseconds)%n",
                "profile", "size", "p50", "p99", "max", "p50", "p99", "max");
        for (var profile : links.entrySet()) {
            var name = profile.getKey();
            var allocator = new GpuSetAllocator(profile.getValue());
            int n = profile.getValue().size();
            long all = DeviceMask.all(n);
            var random = new Random(1);
            for (int i = 0; i < WARM_UP_CALLS; i++) {
                sink += allocator.choose(all & (random.nextLong() | random.nextLong()), 0, 1 + random.nextInt(n), random.nextBoolean())
                        .map(GpuSet::linkScore).orElse(0L);
            }
            for (int size = 1; size <= n; size++) {
                var full = new long[MEASURED_CALLS];
                var partial = new long[MEASURED_CALLS];
                for (int i = 0; i < MEASURED_CALLS; i++) {
                    long start = System.nanoTime();
                    sink += allocator.choose(all, 0, size, false).map(GpuSet::linkScore).orElse(0L);
                    full[i] = System.nanoTime() - start;
                    long available = all & (random.nextLong() | random.nextLong());
                    start = System.nanoTime();
                    sink += allocator.choose(available, 0, size, true).map(GpuSet::linkScore).orElse(0L);
                    partial[i] = System.nanoTime() - start;
                }
                System.out.printf("%-14s %4d | %s | %s%n", name, size, percentiles(full), percentiles(partial));
            }
        }
        // Printed so the JIT cannot drop the calls whose results nobody reads.
        System.out.println("(checksum " + sink + ")");
        return 0;
    }

    private static String percentiles(long[] nanos) {
        return String.format("%8.1f %8.1f %10.1f", Percentiles.of(nanos, nanos.length, 50) / 1000,
                Percentiles.of(nanos, nanos.length, 99) / 1000, Percentiles.of(nanos, nanos.length, 100) / 1000);
    }
}
