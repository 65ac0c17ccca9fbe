package io.hetgpu.simulator;

import java.util.List;

/**
 * What happened to one job.
 *
 * @param job           the job
 * @param start         seconds when its last pod was placed (it runs from then)
 * @param end           seconds when it finished
 * @param placements    where its pods went
 * @param models        card model of each GPU it got
 * @param topTierGpus   how many of its GPUs are of the cluster's top tier
 * @param onNvlink      every GPU in one NVLink-connected set
 * @param crossRackGb   gradient traffic that crossed racks (ps/worker jobs)
 */
public record JobRun(Job job, double start, double end, List<Placer.PodPlacement> placements, List<String> models,
                     int topTierGpus, boolean onNvlink, double crossRackGb) {

    public JobRun {
        placements = List.copyOf(placements);
        models = List.copyOf(models);
    }

    public double completionHours() {
        return (end - job.arrival()) / 3600;
    }

    public double queueingHours() {
        return (start - job.arrival()) / 3600;
    }

    public double gpuHours() {
        return job.gpus() * (end - start) / 3600;
    }
}
