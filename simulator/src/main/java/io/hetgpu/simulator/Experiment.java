package io.hetgpu.simulator;

import io.hetgpu.extender.ExtenderConfig;
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
 */
public record Experiment(String name, ClusterInventory inventory, List<Job> jobs, CardSpeed speed, WorkloadThroughputs workloads) {

    /** The minimumSpeedShare of the last workload-aware run; the README gives figures for others. */
    static final double SLOW_CARD_SHARE = 0.35;

    /** The policies compared, each a fresh placer seeded alike. */
    public List<Placer> placers(long seed) {
        var config = ExtenderConfig.DEFAULTS;
        var placers = new ArrayList<Placer>();
        placers.add(new KubernetesDefaultPlacer(seed));
        // The extender's defaults, which are also what manifests/ deploys (a manifests test keeps them equal).
        placers.add(hetgpu("hetgpu", config.weights(), WorkloadThroughputs.NONE, seed));
        var w = config.weights();
        placers.add(hetgpu("hetgpu-no-tier", new ScoreWeights(0, w.nvlink(), w.job(), w.data(), w.cpu()), WorkloadThroughputs.NONE, seed));
        placers.add(hetgpu("hetgpu-no-nvlink", new ScoreWeights(w.tier(), 0, w.job(), w.data(), w.cpu()), WorkloadThroughputs.NONE, seed));
        placers.add(hetgpu("hetgpu-no-job", new ScoreWeights(w.tier(), w.nvlink(), 0, w.data(), w.cpu()), WorkloadThroughputs.NONE, seed));
        placers.add(hetgpu("hetgpu-no-data", new ScoreWeights(w.tier(), w.nvlink(), w.job(), 0, w.cpu()), WorkloadThroughputs.NONE, seed));
        placers.add(hetgpu("hetgpu-no-cpu", new ScoreWeights(w.tier(), w.nvlink(), w.job(), w.data(), 0), WorkloadThroughputs.NONE, seed));
        if (!workloads.isEmpty()) {
            placers.add(hetgpu("hetgpu-workload-aware", config.weights(), workloads, seed));
            // The same table with minimumSpeedShare: pods wait rather than start on cards they crawl on.
            placers.add(hetgpu("hetgpu-workload-aware-min" + SLOW_CARD_SHARE, config.weights(),
                    workloads.withMinimumShare(SLOW_CARD_SHARE), seed));
        }
        return placers;
    }

    private static Placer hetgpu(String name, ScoreWeights weights, WorkloadThroughputs workloads, long seed) {
        var policy = new PlacementPolicy(ExtenderConfig.DEFAULTS.priority(), weights, workloads);
        return new HetgpuPlacer(name, policy, !workloads.isEmpty(), seed);
    }

    public List<Summary> run(long seed) {
        var simulation = new Simulation(inventory, speed);
        return placers(seed).stream().map(placer -> Summary.of(simulation.run(jobs, placer), inventory)).toList();
    }
}
