package io.hetgpu.simulator;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import java.util.ArrayList;
import java.util.List;

/**
 * One trace under every policy, with the same seed for each: Kubernetes' default, hetgpu as shipped
 * (the extender's default configuration), hetgpu with each scorer off in turn, and hetgpu with the
 * workload-aware card table when the workload has one.
 *
 * @param name      workload name for the report
 * @param inventory the cluster
 * @param jobs      the trace
 * @param speed     how fast each job runs on each card
 * @param workloads the admin's throughput table for the workload-aware run (NONE to skip that run)
 * @param slowCardShare the minimumSpeedShare of the last two workload-aware runs
 * @param reserve   the highPriorityReserve of the last run: top-tier GPUs kept for high-priority pods
 * @param config    the extender configuration whose policy.priority and policy.weights every hetgpu run uses
 *                  (the ablations zero one weight of them)
 * @param checkpoints what an eviction costs the jobs
 * @param communication how much a multi-GPU job slows down for where its GPUs are
 * @param learning  how the hetgpu runs without a given table learn one ({@link Learning.Setup#OFF}: they do not, and
 *                  their pods name no class)
 */
public record Experiment(String name, ClusterInventory inventory, List<Job> jobs, CardSpeed speed, WorkloadThroughputs workloads,
                         double slowCardShare, int reserve, ExtenderConfig config, Checkpoints checkpoints,
                         CommunicationModel communication, Learning.Setup learning) {

    /** The minimumSpeedShare the README's figures use; {@code --minimum-speed-share} gives others. */
    static final double SLOW_CARD_SHARE = 0.3;
    /** The highPriorityReserve the README's figures use; {@code --high-priority-reserve} gives others. */
    static final int RESERVE = 10;

    public Experiment(String name, ClusterInventory inventory, List<Job> jobs, CardSpeed speed, WorkloadThroughputs workloads) {
        this(name, inventory, jobs, speed, workloads, SLOW_CARD_SHARE, RESERVE);
    }

    public Experiment(String name, ClusterInventory inventory, List<Job> jobs, CardSpeed speed, WorkloadThroughputs workloads,
                      double slowCardShare, int reserve) {
        this(name, inventory, jobs, speed, workloads, slowCardShare, reserve, ExtenderConfig.DEFAULTS, Checkpoints.DEFAULTS,
                CommunicationModel.DEFAULTS, Learning.Setup.OFF);
    }

    /** The same runs with the policy settings of an extender configuration file ({@code --config}). */
    public Experiment withConfig(ExtenderConfig newConfig) {
        return new Experiment(name, inventory, jobs, speed, workloads, slowCardShare, reserve, newConfig, checkpoints, communication, learning);
    }

    /** The same runs with another cost of eviction ({@code --checkpoint-interval}, {@code --restart-overhead}). */
    public Experiment withCheckpoints(Checkpoints newCheckpoints) {
        return new Experiment(name, inventory, jobs, speed, workloads, slowCardShare, reserve, config, newCheckpoints, communication, learning);
    }

    /** The same runs with other communication factors ({@code --communication}). */
    public Experiment withCommunication(CommunicationModel newCommunication) {
        return new Experiment(name, inventory, jobs, speed, workloads, slowCardShare, reserve, config, checkpoints, newCommunication, learning);
    }

    /** The same runs, hetgpu's learning as {@code newLearning} says ({@code --learning} and its options). */
    public Experiment withLearning(Learning.Setup newLearning) {
        return new Experiment(name, inventory, jobs, speed, workloads, slowCardShare, reserve, config, checkpoints, communication, newLearning);
    }

    /** The policies compared, each a fresh placer seeded alike. */
    public List<Placer> placers(long seed) {
        var placers = new ArrayList<Placer>();
        // The baseline: kube-scheduler as a cluster with PriorityClasses and no gang scheduling runs it, pod by pod and
        // preempting. Every hetgpu run preempts too. Beside it, the same with whole-workload admission (Kueue), and the
        // earlier releases' baseline that never preempts.
        placers.add(new KubernetesDefaultPlacer(seed));
        placers.add(KubernetesDefaultPlacer.wholeWorkload(seed));
        placers.add(KubernetesDefaultPlacer.nonPreemptive(seed));
        // kube-scheduler with DRA (1.35+), pod by pod: plain claims, first fit, against hetgpu's shipped claim templates;
        // each as 1.35-1.37 preempt (a victim's devices stay allocated in the dry run) and as DRAPreemption does.
        for (boolean releases : new boolean[] {false, true}) {
            placers.add(new DraPlacer(DraPlacer.Claims.FIRST_FIT, releases, inventory, seed));
            placers.add(new DraPlacer(DraPlacer.Claims.HETGPU, releases, inventory, seed));
        }
        // By default the extender's defaults, which are also what manifests/ deploys (a manifests test keeps them equal).
        placers.add(hetgpu("hetgpu", config.weights(), WorkloadThroughputs.NONE, seed));
        var w = config.weights();
        // Each scorer turned off in turn: what it adds to the policy as shipped (unless it is the only one left on).
        for (var scorer : ScoreWeights.names()) {
            if (w.byName().entrySet().stream().anyMatch(other -> !other.getKey().equals(scorer) && other.getValue() > 0)) {
                placers.add(hetgpu("hetgpu-no-" + scorer, w.with(scorer, 0), WorkloadThroughputs.NONE, seed));
            }
        }
        if (!workloads.isEmpty()) {
            // The oracle: the table the jobs truly run at, given as the configured table, and nothing learned.
            placers.add(hetgpu("hetgpu-workload-aware", config.weights(), workloads, seed));
            // The same table with minimumSpeedShare: pods wait rather than start on cards they crawl on.
            placers.add(hetgpu("hetgpu-workload-aware-min" + slowCardShare, config.weights(), workloads.withMinimumShare(slowCardShare), seed));
            // And with the last top-tier GPUs kept free for urgent jobs, so that they need not wait for an eviction.
            placers.add(hetgpu("hetgpu-workload-aware-min" + slowCardShare + "-reserve" + reserve, config.weights(),
                    workloads.withMinimumShare(slowCardShare), new HighPriorityReserve(reserve), seed));
        }
        return placers;
    }

    private Placer hetgpu(String name, ScoreWeights weights, WorkloadThroughputs workloads, long seed) {
        return hetgpu(name, weights, workloads, HighPriorityReserve.NONE, seed);
    }

    /**
     * A hetgpu run. Without a table of its own it learns one when learning is on, as the extender does by default: the
     * configured table it merges under is the --config file's (none as shipped), with the file's minimumSpeedShare unless the
     * learning setup gives one.
     */
    private Placer hetgpu(String name, ScoreWeights weights, WorkloadThroughputs workloads, HighPriorityReserve reserve, long seed) {
        var settings = config.policy().withWeights(weights).withReserve(reserve);
        if (workloads.isEmpty() && learning.enabled()) {
            var configured = config.policy().throughputs();
            if (!Double.isNaN(learning.minimumShare())) {
                configured = configured.withMinimumShare(learning.minimumShare());
            }
            settings = settings.withThroughputs(configured);
            return new HetgpuPlacer(name, settings, new Learning(learning, configured, seed), seed);
        }
        var policy = new PlacementPolicy(settings.withThroughputs(workloads));
        return new HetgpuPlacer(name, policy, !workloads.isEmpty(), seed);
    }

    public List<Summary> run(long seed) {
        return run(seed, name -> true);
    }

    /** The policies whose names pass {@code which}, every kube-scheduler run (the report's baselines) always. */
    public List<Summary> run(long seed, java.util.function.Predicate<String> which) {
        var simulation = new Simulation(inventory, speed, checkpoints, communication);
        // Each policy's run is independent of the others (its own placer, tie-breaks and state): run them side by side.
        return placers(seed).parallelStream().filter(placer -> placer instanceof KubernetesDefaultPlacer || which.test(placer.name()))
                .map(placer -> Summary.of(simulation.run(jobs, placer), inventory).withLearned(placer.learned())).toList();
    }
}
