package io.hetgpu.simulator;

/** How the pods of a job of several get their nodes: what the scheduler knows of jobs. */
sealed interface Admission {

    PodByPod POD_BY_POD = new PodByPod();
    WholeWorkload WHOLE_WORKLOAD = new WholeWorkload();

    /**
     * kube-scheduler without a gang plugin: each pod is queued, placed and preempted for on its own; a placed pod holds
     * its GPUs whether or not its job's other pods have a node, and the job makes progress once all of them run.
     */
    record PodByPod() implements Admission {
    }

    /**
     * Every pod of the job or none, as Kueue or kube-scheduler's Workload API admit a workload; its preemption stands
     * only if every pod then starts.
     */
    record WholeWorkload() implements Admission {
    }

    /** The extender plans the job whole or refuses it, holding nothing, and preempts for it as a whole. */
    record Planned(JobPlacing jobs) implements Admission {
    }
}
