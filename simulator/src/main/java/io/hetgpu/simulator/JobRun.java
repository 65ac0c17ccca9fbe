package io.hetgpu.simulator;

import java.util.List;

/**
 * What happened to one job: its last run, and what its runs before that cost when it was evicted.
 *
 * @param job             the job
 * @param start           seconds when its last run began (its last pod placed)
 * @param end             seconds when it finished
 * @param placements      where its pods went in its last run
 * @param models          card model of each GPU of its last run
 * @param topTierGpus     how many of those GPUs are of the cluster's top tier
 * @param onNvlink        every GPU in one NVLink-connected set
 * @param crossRackGb     gradient traffic of its last run that crossed racks (ps/worker jobs)
 * @param evictions       how many times it was preempted
 * @param lostGpuHours    GPU-hours that produced nothing kept: work since the last checkpoint at each eviction, and
 *                        every restart's overhead
 * @param earlierGpuHours GPU-hours its evicted runs held
 */
public record JobRun(Job job, double start, double end, List<Placer.PodPlacement> placements, List<String> models,
                     int topTierGpus, boolean onNvlink, double crossRackGb, int evictions, double lostGpuHours,
                     double earlierGpuHours) {

    public JobRun {
        placements = List.copyOf(placements);
        models = List.copyOf(models);
    }

    /** A job that ran once, never evicted. */
    public JobRun(Job job, double start, double end, List<Placer.PodPlacement> placements, List<String> models,
                  int topTierGpus, boolean onNvlink, double crossRackGb) {
        this(job, start, end, placements, models, topTierGpus, onNvlink, crossRackGb, 0, 0, 0);
    }

    public double completionHours() {
        return (end - job.arrival()) / 3600;
    }

    /** Arrival to the start of its last run. */
    public double queueingHours() {
        return (start - job.arrival()) / 3600;
    }

    /** GPU-hours it held, evicted runs included. */
    public double gpuHours() {
        return job.gpus() * (end - start) / 3600 + earlierGpuHours;
    }
}
