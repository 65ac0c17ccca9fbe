package io.hetgpu.testcluster.draplacement;

import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.testcluster.demo.DemoCluster;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code dra-placement}: hetgpu's DRA claims against plain first-fit claims on the demo's cluster, in the allocator model. */
@Command(name = "dra-placement", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = {"Place one mix of pods (high, normal and low priority; 1, 2, 4 and 8 GPUs) on the demo's cluster as DRA nodes "
                + "publishing hetgpu's slices, by kube-scheduler's DRA allocator model: with plain first-fit claims, and with hetgpu's "
                + "claims (the shipped templates: tier bands in the pod's order, one NVLink set preferred for several GPUs) without and with kube-scheduler's prioritized-list "
                + "score. Figures, not pass/fail."})
public final class DraPlacementCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--jobs", paramLabel = "N", defaultValue = "2000", description = "Pods per seed, one arriving per tick. Default: ${DEFAULT-VALUE}.")
    int jobs;

    @Option(names = "--seeds", paramLabel = "N", defaultValue = "5", description = "Seeds 1..N, each its own mix and tie-breaks, summed. Default: ${DEFAULT-VALUE}.")
    int seeds;

    @Option(names = "--mean-duration", paramLabel = "T", defaultValue = "20",
            description = "Mean ticks a pod holds its GPUs (at least 5); about 20 keeps the demo's GPUs busy. Default: ${DEFAULT-VALUE}.")
    int meanDuration;

    /** Bounds the options, so that a typo cannot run for hours. */
    static final int MAX_JOBS = 100_000;
    static final int MAX_SEEDS = 100;
    static final int MAX_MEAN_DURATION = 10_000;

    @Override
    public Integer call() {
        var err = spec.commandLine().getErr();
        if (jobs < 1 || jobs > MAX_JOBS || seeds < 1 || seeds > MAX_SEEDS || meanDuration < 5 || meanDuration > MAX_MEAN_DURATION) {
            err.println("hetgpu: dra-placement: --jobs 1.." + MAX_JOBS + ", --seeds 1.." + MAX_SEEDS + " and --mean-duration 5.."
                    + MAX_MEAN_DURATION + ", got " + jobs + ", " + seeds + " and " + meanDuration);
            return 2;
        }
        var placement = new DraPlacement(DraNodes.of(DemoCluster.nodes(), CardCatalog.defaults()), DraLimits.DEFAULTS);
        print(spec.commandLine().getOut(), placement.compare(seeds, jobs, meanDuration), jobs * seeds);
        return 0;
    }

    static void print(PrintWriter out, List<Map.Entry<String, DraPlacement.Figures>> rows, int pods) {
        out.printf("DRA placement on the demo's cluster: %,d pods%n", pods);
        out.printf("%-38s %14s %14s %16s %9s %s%n", "claims", "high on newest", "low on oldest", "multi-GPU claims", "refused",
                "(high/normal/low; multi-GPU)");
        out.printf("%-38s %14s %14s %16s %9s%n", "", "tier (GPUs)", "tier (GPUs)", "NVLink-connected", "");
        for (var row : rows) {
            var f = row.getValue();
            out.printf("%-38s %13.1f%% %13.1f%% %15.1f%% %9d (%d/%d/%d; %d)%n", row.getKey(), 100 * f.highOnNewestShare(),
                    100 * f.lowOnOldestShare(), 100 * f.multiNvlinkShare(), f.refused(), f.refusedByPriority()[0], f.refusedByPriority()[1],
                    f.refusedByPriority()[2], f.refusedMultiGpu());
        }
        out.flush();
    }
}
