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
 * @param evictions       how many times it was preempted (its pods while it was half-placed included)
 * @param lostGpuHours    GPU-hours that produced nothing kept: work since the last checkpoint at each eviction, and
 *                        every restart's overhead
 * @param earlierGpuHours GPU-hours its evicted runs held
 * @param halfPlaced      the times some of its pods held a node while others waited for one
 */
public record JobRun(Job job, double start, double end, List<Placer.PodPlacement> placements, List<String> models,
                     int topTierGpus, boolean onNvlink, double crossRackGb, int evictions, double lostGpuHours,
                     double earlierGpuHours, HalfPlaced halfPlaced) {

    public JobRun {
        placements = List.copyOf(placements);
        models = List.copyOf(models);
    }

    /** A job that ran once, never evicted nor half-placed. */
    public JobRun(Job job, double start, double end, List<Placer.PodPlacement> placements, List<String> models,
                  int topTierGpus, boolean onNvlink, double crossRackGb) {
        this(job, start, end, placements, models, topTierGpus, onNvlink, crossRackGb, 0, 0, 0, HalfPlaced.NONE);
    }

    /**
     * The stretches of time during which some of a job's pods were placed while others waited, summed over them: what
     * kube-scheduler without a gang plugin leaves, pods holding GPUs for a job that cannot train yet.
     *
     * @param gpuHours                GPU-hours held by its placed pods while the job was incomplete
     * @param longestHours            the longest such stretch, whatever its placed pods held
     * @param longestHoldingGpusHours the longest stretch during which its placed pods held GPUs
     */
    public record HalfPlaced(double gpuHours, double longestHours, double longestHoldingGpusHours) {

        public static final HalfPlaced NONE = new HalfPlaced(0, 0, 0);

        HalfPlaced plus(HalfPlaced other) {
            return new HalfPlaced(gpuHours + other.gpuHours, Math.max(longestHours, other.longestHours),
                    Math.max(longestHoldingGpusHours, other.longestHoldingGpusHours));
        }

        /** Whether the job ever waited half-placed: time passed with some of its pods placed and others not. */
        public boolean stalled() {
            return longestHours > 0;
        }
    }

    public double completionHours() {
        return (end - job.arrival()) / 3600;
    }

    /** Arrival to the start of its last run. */
    public double queueingHours() {
        return (start - job.arrival()) / 3600;
    }

    /** GPU-hours it held running, evicted runs included (not those held while it was half-placed). */
    public double gpuHours() {
        return job.gpus() * (end - start) / 3600 + earlierGpuHours;
    }
}
