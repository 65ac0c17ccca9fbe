package io.hetgpu.simulator;

import io.hetgpu.extender.service.JobPreemptionStep;
import java.util.List;

/** A scheduler that places a job of several pods as a whole: hetgpu's extender, through its own planner and job preemption rule. */
interface JobPlacing {

    /** A node and GPUs for every pod of the job, in pod order, committed together; null when the job cannot be placed whole now. */
    List<Placer.PodPlacement> plan(Job job, ClusterState cluster);

    /**
     * What the job may evict to be placed whole, by the extender's own rule.
     *
     * @param victims every pod below the job's priority that holds GPUs
     */
    JobPreemptionStep.Answer preempt(Job job, ClusterState cluster, List<JobPreemptionStep.Victim> victims);
}
