package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.List;

/**
 * The cluster a {@link SchedulerDriver} schedules on: what it lists at the start of a round, and where each decision is
 * written. The API server in a test cluster ({@link ApiServerTarget}); a copy in memory where the question is only where
 * pods would go.
 */
public interface SchedulingTarget {

    List<Node> nodes();

    /** Every pod, bound or not. */
    List<Pod> pods();

    /** The PodDisruptionBudgets preemption weighs. */
    List<PodDisruptionBudget> budgets();

    /**
     * What the decision does to the cluster: a pod kube-scheduler binds itself is bound (one an extender bound is already),
     * a nominated pod's victims are evicted, and the events kube-scheduler writes are written.
     */
    void write(Pod pod, Decision decision);

    /** The DRA objects kube-scheduler's DynamicResources plugin reads; none where the target has no DRA. */
    default DraSnapshot dra() {
        return DraSnapshot.EMPTY;
    }

    /**
     * Reserve and PreBind of the DynamicResources plugin, before the pod is bound: the claim for extended resources made,
     * each allocation written to its claim's status with the pod in {@code reservedFor}.
     */
    default void reserve(Pod pod, String node, DraFilter.Fits fits) {
    }
}
