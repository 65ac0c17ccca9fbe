package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.DraFilter;
import io.hetgpu.testcluster.scheduler.DraSnapshot;
import io.hetgpu.testcluster.scheduler.SchedulingTarget;
import java.util.List;

/**
 * A copy of the cluster as the scheduler driver's target: it lists the copy, and writes each decision into it as the API
 * server would take it (a binding, a nominated node, victims evicted), so that each decision sees those before it and
 * the cluster itself is never written to. Events are left out: nobody reads them here.
 *
 * @param budgets the PodDisruptionBudgets preemption weighs
 * @param draObjects DRA's objects in the copy, which the DynamicResources plugin's Reserve and PreBind write to
 */
record CopyTarget(ListedClusterView copy, List<PodDisruptionBudget> budgets, CopyDra draObjects) implements SchedulingTarget {

    CopyTarget {
        budgets = List.copyOf(budgets);
    }

    @Override
    public List<Node> nodes() {
        return copy.nodeObjects();
    }

    /** Copies: the driver marks the pods it binds on its own list. */
    @Override
    public List<Pod> pods() {
        return copy.pods().stream().map(pod -> new PodBuilder(pod).build()).toList();
    }

    @Override
    public DraSnapshot dra() {
        return draObjects.inUse() ? draObjects.snapshot() : DraSnapshot.EMPTY;
    }

    @Override
    public void reserve(Pod pod, String node, DraFilter.Fits fits) {
        draObjects.reserve(pod, fits);
    }

    @Override
    public void write(Pod pod, Decision decision) {
        switch (decision) {
            case Decision.Bound bound when !bound.byExtender() -> copy.put(CopyBinder.bound(copy.pod(
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName()), bound.node()));
            case Decision.Nominated nominated -> {
                for (var victim : nominated.victims()) {
                    var namespaceAndName = victim.split("/", 2);
                    var evicted = copy.pod(namespaceAndName[0], namespaceAndName[1]);
                    if (evicted != null) {
                        copy.remove(evicted);
                    }
                }
                var current = copy.pod(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
                copy.put(new PodBuilder(current).editOrNewStatus().withNominatedNodeName(nominated.node()).endStatus().build());
            }
            default -> {
            }
        }
    }
}
