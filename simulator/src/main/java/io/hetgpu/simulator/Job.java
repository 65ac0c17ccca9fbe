package io.hetgpu.simulator;

import io.hetgpu.kubescheduler.CpuMemory;
import java.util.List;
import java.util.Set;

/**
 * One job of a trace.
 *
 * @param id              position in the trace (ties in the queue go to the lower id)
 * @param arrival         seconds since the trace started
 * @param high            high priority (spec.priority {@link #HIGH_PRIORITY}); the report's "other" jobs are the rest
 * @param priority        the pods' spec.priority
 * @param type            the job type, for the card speed model (a Gavel job type, or "" for an unknown one)
 * @param pods            the pods, created in this order (a ps/worker job: the ps first)
 * @param work            seconds it runs on the workload's reference card with every GPU NVLink-connected
 * @param models          card models it accepts (empty = any)
 * @param minMemoryMiB    least memory per GPU (0 = any)
 * @param trafficGbPerHour gradient traffic between each worker and the ps, for ps/worker jobs (0 otherwise)
 * @param dataRack        the rack its training data lives in, or "" for none
 */
public record Job(int id, double arrival, boolean high, int priority, String type, List<Pod> pods, double work,
                  Set<String> models, long minMemoryMiB, double trafficGbPerHour, String dataRack) {

    /** At the extender's default high threshold: the newest (or, workload-aware, fastest) cards. */
    public static final int HIGH_PRIORITY = 1000;
    /** A pod without a PriorityClass: neutral, card tier does not count. */
    public static final int NORMAL_PRIORITY = 0;
    /** Below the extender's default low threshold (below 0): the oldest cards that fit. */
    public static final int LOW_PRIORITY = -1;

    public Job {
        pods = List.copyOf(pods);
        models = Set.copyOf(models);
    }

    /**
     * @param gpus GPUs the pod needs
     * @param role "ps", "worker" or "" for a single-pod job
     */
    public record Pod(int gpus, String role) {

        /** What the pod requests besides GPUs; see {@link #requestsFor(int)}. */
        public CpuMemory requests() {
            return requestsFor(gpus);
        }

        /**
         * A pod's cpu and memory requests follow from its GPU count, as the demo's pods ask: 4 cores and
         * 32 GiB per GPU, or 4 cores and 16 GiB without GPUs (a parameter server, a serving pod). Being a
         * function of the GPU count, they are accounted from the devices a pod takes.
         */
        public static CpuMemory requestsFor(int gpus) {
            return gpus == 0 ? CpuMemory.of(4, 16) : CpuMemory.of(4L * gpus, 32L * gpus);
        }
    }

    public int gpus() {
        return pods.stream().mapToInt(Pod::gpus).sum();
    }

    public boolean distributed() {
        return pods.size() > 1;
    }
}
