package io.hetgpu.extender.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.explain.PlacementExplanation;
import io.hetgpu.extender.job.AssessmentsBetweenPlans;
import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * A whole job's plan without HTTP: the {@value BenchJob#SIZE} pods of {@link BenchJob} planned over the benchmark's
 * generated cluster in a loop, as the filter of the job's first pod plans them (node states read from the cluster view,
 * assessments kept between plans), for a profiler to look at. Prints p50/p99 of the states and of the plan, a first
 * pass (warm-up) and a second. Not a test.
 *
 * <pre>
 *   java -XX:StartFlightRecording=filename=plan.jfr,settings=profile -cp ... \
 *       io.hetgpu.extender.bench.JobPlanProfile 5000 6     # nodes, seconds per pass
 * </pre>
 */
@Command(name = "JobPlanProfile", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = "A 16-pod job's plan without HTTP: p50/p99 of the states and the plan, and the bytes a plan allocates.")
public final class JobPlanProfile implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NODES", description = "nodes in the cluster")
    int size;

    @Parameters(index = "1", paramLabel = "SECONDS", description = "seconds per pass (a warm-up, then a measured one)")
    double seconds;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        BenchCommandLine.run(new JobPlanProfile(), args);
    }

    @Override
    public Integer call() throws Exception {
        BenchCommandLine.require(spec, size >= 1, "NODES must be at least 1, got " + size);
        BenchCommandLine.require(spec, seconds > 0, "SECONDS must be more than 0, got " + seconds);
        var catalog = CardCatalog.defaults();
        var snapshot = new BenchCluster(size, 42).view().nodes();
        var factory = new NodeStateFactory(catalog, "topology.hetgpu.io/rack");
        var parser = new PodRequestParser("nvidia.com/gpu", catalog);
        var planner = new JobPlanner(new PlacementPolicy(PolicySettings.DEFAULTS));
        var members = new ArrayList<PodRequest>();
        for (int i = 0; i < BenchJob.SIZE; i++) {
            members.add(parser.parse(KubeJson.MAPPER.readValue(BenchJob.member(i), Pod.class)));
        }
        var job = new JobPlanner.Job("bench/llama", members, pod -> PlacementContext.EMPTY, pod -> ClosedTier.NONE);
        var kept = new AssessmentsBetweenPlans();
        for (int pass = 0; pass < 2; pass++) {
            var states = new long[1_000_000];
            var plans = new long[1_000_000];
            var explanations = new long[1_000_000];
            int n = 0;
            long until = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < until && n < plans.length) {
                long t0 = System.nanoTime();
                var nodes = new ArrayList<NodeState>(snapshot.size());
                for (int i = 0; i < snapshot.size(); i++) {
                    nodes.add(factory.state(snapshot.facts(i), snapshot.boundPods(i)));
                }
                long t1 = System.nanoTime();
                if (!(planner.plan(job, nodes, JobPlanner.MemberFit.ANY, kept) instanceof JobPlanner.Planned planned)) {
                    throw new IllegalStateException("the job found no plan");
                }
                long t2 = System.nanoTime();
                // What the extender adds once a plan holds: each member's placement Event explains its scores.
                planned.seats().forEach(seat -> PlacementExplanation.of(seat.scores()));
                long t3 = System.nanoTime();
                states[n] = t1 - t0;
                plans[n] = t2 - t1;
                explanations[n] = t3 - t2;
                n++;
            }
            // What one plan allocates: young collections, and their pauses in a filter's p99, come as often as it is large.
            var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            var nodes = new ArrayList<NodeState>(snapshot.size());
            for (int i = 0; i < snapshot.size(); i++) {
                nodes.add(factory.state(snapshot.facts(i), snapshot.boundPods(i)));
            }
            long before = threads.getCurrentThreadAllocatedBytes();
            planner.plan(job, nodes, JobPlanner.MemberFit.ANY, kept);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            System.out.printf("size %d, %d plans of %d pods: states p50 %.3f ms; plan p50 %.3f ms, p99 %.3f ms, %.2f MB allocated; the members' explanations p50 %.3f ms%n",
                    size, n, BenchJob.SIZE, Percentiles.millis(states, n, 50), Percentiles.millis(plans, n, 50),
                    Percentiles.millis(plans, n, 99), allocated / 1e6, Percentiles.millis(explanations, n, 50));
        }
        return 0;
    }
}
