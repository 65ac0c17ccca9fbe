package io.hetgpu.extender.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.service.WholeJobs;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whole jobs of thousands of pods through the filter verb, in process, over a cluster of 1,000 DGX A100 nodes (8 GPUs
 * each, all free; 5,000 for one case) as the shipped extender holds it: for each job, the filter that plans it (its first pod's), the filters
 * of its other pods (the first 200 after it), a pod of no job after it, and the heap the held plan keeps (the heap with
 * it less the heap once it is let go). Run by
 * {@code ./hetgpu bench extender --jobs} in a JVM of the shipped Deployment's heap (921 MiB, exit on OutOfMemoryError).
 * Not a test: figures.
 */
final class JobScaleBenchmark {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final String RACK = "topology.hetgpu.io/rack";
    private static final int NODES = 1000;
    private static final int OTHERS_TIMED = 200;

    /**
     * A job of {@code pods} pods of {@code gpus} GPUs each over {@code nodes} nodes; pinned: each pod's node selector names
     * a node of its own; ownWorkloads: each pod names a workload class of its own (free text where no throughput table is
     * configured), so that no two pods share a shape.
     */
    private record Case(String name, int pods, int gpus, int nodes, boolean pinned, boolean ownWorkloads) {
        Case(String name, int pods, int gpus, boolean pinned) {
            this(name, pods, gpus, NODES, pinned, false);
        }
    }

    private static final List<Case> CASES = List.of(
            new Case("16 pods of 1 GPU", 16, 1, false),
            new Case("1,000 pods of 1 GPU", 1000, 1, false),
            new Case("3,000 pods of 1 GPU", 3000, 1, false),
            new Case("4,096 pods of 1 GPU (the largest planned)", 4096, 1, false),
            new Case("2,000 pods of 2 GPUs, each pinned to its node", 2000, 2, true),
            new Case("3,000 pods of 8 GPUs (cannot fit)", 3000, 8, false),
            new Case("10,000 pods of 1 GPU (above the largest)", 10_000, 1, false),
            new Case("1,000 pods of 0 GPUs, each its own workload, 5,000 nodes", 1000, 0, 5000, false, true));

    private JobScaleBenchmark() {
    }

    public static void main(String[] args) {
        var runtime = Runtime.getRuntime();
        System.out.printf("%d nodes of 8 A100 each unless said; JVM heap %d MiB; plan budget %d ms, largest job %d pods (as shipped)%n", NODES,
                runtime.maxMemory() >> 20, WholeJobs.Settings.DEFAULT_PLAN_BUDGET.toMillis(), WholeJobs.Settings.DEFAULT_MAX_JOB_PODS);
        System.out.printf("%-48s %10s %10s %12s %12s %10s %10s  %s%n", "job", "plan ms", "plan CPU", "others p50", "others max",
                "alone ms", "held MiB", "outcome");
        // The first case once untimed: the JIT's first compilations are not a plan's cost.
        run(CASES.get(1), false);
        for (var each : CASES) {
            run(each, true);
        }
    }

    private static void run(Case job, boolean print) {
        var nodes = new ArrayList<Node>(job.nodes());
        var names = new ArrayList<String>(job.nodes());
        for (int i = 0; i < job.nodes(); i++) {
            var name = String.format("n%04d", i);
            var topology = TestTopologies.dgxA100(name);
            names.add(name);
            nodes.add(new NodeBuilder().withNewMetadata().withName(name).withLabels(Map.of("kubernetes.io/hostname", name, RACK, "r" + i / 20))
                    .withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, TestTopologies.inventory(topology),
                            HetgpuKeys.ANNOTATION_FREE, TestTopologies.allFree(topology))).endMetadata().build());
        }
        var pods = new ArrayList<Pod>(job.pods());
        for (int m = 0; m < job.pods(); m++) {
            var spec = new PodBuilder().withNewMetadata().withName("train-" + m).withNamespace("ml").withUid("uid-" + m)
                    .withResourceVersion("1").withCreationTimestamp("2026-11-28T00:00:00Z")
                    .withLabels(Map.of(HetgpuKeys.POD_JOB, "train")).withAnnotations(job.ownWorkloads()
                            ? Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(job.pods()), HetgpuKeys.POD_WORKLOAD, "class-" + m)
                            : Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(job.pods())))
                    .endMetadata().withNewSpec().withSchedulerName("hetgpu-scheduler");
            if (job.pinned()) {
                spec = spec.withNodeSelector(Map.of("kubernetes.io/hostname", names.get(m % job.nodes())));
            }
            pods.add(spec.addNewContainer().withName("main").withImage("train")
                    .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(job.gpus())))).endResources()
                    .endContainer().endSpec().build());
        }
        var parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
        var view = new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust());
        var settings = new WholeJobs.Settings(JobSizes.STATED_ONLY, WholeJobs.Settings.DEFAULT_DEADLINE, JobHolds.Listener.NONE,
                WholeJobs.Settings.DEFAULT_MAX_JOB_PODS, WholeJobs.Settings.DEFAULT_PLAN_BUDGET, Set.of("hetgpu-scheduler"));
        var service = ExtenderVerbs.of(view, parser, new NodeStateFactory(CATALOG, RACK, "nvidia.com/gpu"), new PlacementPolicy(PolicySettings.DEFAULTS),
                (pod, table) -> { }, advice -> { }, PodBinder.NONE, report -> { }, BindVerb.Limits.DEFAULTS, settings).service();
        var alone = new PodBuilder().withNewMetadata().withName("serving").withNamespace("ml").withUid("serving-uid").endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("serve")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity("1"))).endResources().endContainer().endSpec().build();
        // A pod of no job first: what the service keeps for any filter (node states, caches) is not the plan's.
        filter(service, alone, names);
        var threads = ManagementFactory.getThreadMXBean();
        long cpu = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        var first = filter(service, pods.getFirst(), job.pinned() ? List.of(names.getFirst()) : names);
        long plan = System.nanoTime() - start;
        long planCpu = threads.getCurrentThreadCpuTime() - cpu;
        // What the held plan keeps: the heap with it, less the heap once it is let go; then the same plan is held again.
        long kept = 0;
        if (service.jobs().holds().planOf("ml/train") != null) {
            long withPlan = usedHeap();
            service.jobs().holds().release("ml/train", "the benchmark measured the plan's heap");
            kept = withPlan - usedHeap();
            filter(service, pods.getFirst(), job.pinned() ? List.of(names.getFirst()) : names);
        }
        int others = Math.min(OTHERS_TIMED, job.pods() - 1);
        var times = new long[others];
        for (int m = 1; m <= others; m++) {
            long t0 = System.nanoTime();
            filter(service, pods.get(m), job.pinned() ? List.of(names.get(m % job.nodes())) : names);
            times[m - 1] = System.nanoTime() - t0;
        }
        long t0 = System.nanoTime();
        filter(service, alone, names);
        long aloneTime = System.nanoTime() - t0;
        if (print) {
            long max = 0;
            for (long time : times) {
                max = Math.max(max, time);
            }
            System.out.printf("%-48s %10.0f %10.0f %12.2f %12.2f %10.2f %10.2f  %s%n", job.name(), plan / 1e6, planCpu / 1e6,
                    others == 0 ? 0 : Percentiles.millis(times, others, 50), max / 1e6, aloneTime / 1e6, kept / (1024.0 * 1024), outcome(first));
        }
    }

    private static FilterResult filter(ExtenderService service, Pod pod, List<String> offered) {
        return service.filter(new ExtenderArgs(pod, null, offered));
    }

    private static String outcome(FilterResult result) {
        if (result.nodeNames() != null && !result.nodeNames().isEmpty()) {
            return "planned";
        }
        var reason = result.failedAndUnresolvableNodes().values().stream().findFirst().orElse(result.error());
        var at = reason.indexOf("; no GPU is held for it; ");
        return "refused: " + (at >= 0 ? reason.substring(at + "; no GPU is held for it; ".length()) : reason.substring(reason.indexOf(": ") + 2));
    }

    /** The heap in use once the collector has run: what is kept, not what was made on the way. */
    private static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed();
    }
}
