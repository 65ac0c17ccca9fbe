package io.hetgpu.extender.throughput;

import java.time.Instant;
import java.util.Objects;

/**
 * One pod's run, when it ended: what the learner judges. Nothing here is checked beyond nulls: the learner
 * refuses a sample that is not a measurement with a reason ({@link ThroughputLearner#observe}), because the
 * fields come from pods, that is from tenants.
 *
 * @param workloadClass the pod's {@code hetgpu.io/workload}, as written
 * @param namespace     the pod's namespace: whose measurement this is (one namespace's weight is bounded)
 * @param cardModel     the model of its node's cards as {@code CardModel.fromProductName} normalises it ("V100")
 * @param gpus          how many GPUs it held
 * @param runSeconds    from its container's start to its end
 * @param work          what it did or declared, in the class's own unit (steps, images…)
 * @param endedAt       when it ended
 */
public record WorkSample(String workloadClass, String namespace, String cardModel, int gpus,
                         double runSeconds, double work, Instant endedAt) {

    public WorkSample {
        Objects.requireNonNull(workloadClass, "workloadClass");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(cardModel, "cardModel");
        Objects.requireNonNull(endedAt, "endedAt");
    }

    /** Work per second per GPU: the figure the learner keeps (NaN or infinite for a sample it refuses). */
    public double throughputPerGpu() {
        return work / runSeconds / gpus;
    }
}
