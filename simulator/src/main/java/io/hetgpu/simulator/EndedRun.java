package io.hetgpu.simulator;

import java.util.List;

/**
 * One run of a job that ended, completed or evicted: what a cluster shows when the job's pods end. The scheduler may
 * learn from it ({@link Placer#ended}); the simulation's truth about the run (how fast the job ran) travels only as
 * {@code referenceSeconds}, the work it did, which the job itself would count and report.
 *
 * @param job              the job
 * @param pods             each pod of the run that held GPUs, with its card
 * @param runSeconds       seconds from the run's start to its end (a restart's overhead included, as a container's
 *                         startedAt..finishedAt has it)
 * @param referenceSeconds work the run did, in seconds of the job on its reference card (all of it, checkpointed or
 *                         not: what the job counted up to its end)
 * @param endedAt          seconds into the trace
 * @param evicted          whether it was evicted rather than completed
 */
public record EndedRun(Job job, List<Pod> pods, double runSeconds, double referenceSeconds, double endedAt, boolean evicted) {

    public EndedRun {
        pods = List.copyOf(pods);
    }

    /**
     * @param podIndex  the pod's index in the job
     * @param gpus      GPUs it held
     * @param cardModel the slowest (lowest-tier) card model among them
     */
    public record Pod(int podIndex, int gpus, String cardModel) {
    }
}
