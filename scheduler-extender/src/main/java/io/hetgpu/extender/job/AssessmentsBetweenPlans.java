package io.hetgpu.extender.job;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The last assessments of every node for each of a few pod shapes, kept from one plan to the next and reused for a node
 * whose state is the very same object at the same position: the cluster view hands out one immutable state per node
 * until the node, its pods or a plan's hold on it change. Not thread-safe: one planner at a time uses it (plans are made
 * one at a time anyway, so that two never count the same free GPUs).
 */
public final class AssessmentsBetweenPlans implements JobPlanner.KeptAssessments {

    /** How many shapes are kept: the jobs planned in one burst share a few. */
    private static final int SHAPES = 8;

    private record Judged(NodeState[] nodes, PlacementPolicy.Assessment[] assessments) {
    }

    private final Map<List<Object>, Judged> byShape = new HashMap<>();

    @Override
    public PlacementPolicy.Assessment[] known(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes) {
        var result = new PlacementPolicy.Assessment[nodes.size()];
        var judged = byShape.get(List.of(shape, closed));
        if (judged != null) {
            int common = Math.min(judged.nodes().length, nodes.size());
            for (int i = 0; i < common; i++) {
                if (judged.nodes()[i] == nodes.get(i)) {
                    result[i] = judged.assessments()[i];
                }
            }
        }
        return result;
    }

    @Override
    public void made(PodRequest.Shape shape, ClosedTier closed, List<NodeState> nodes, PlacementPolicy.Assessment[] assessments) {
        var key = List.<Object>of(shape, closed);
        if (!byShape.containsKey(key) && byShape.size() >= SHAPES) {
            byShape.clear();
        }
        byShape.put(key, new Judged(nodes.toArray(NodeState[]::new), assessments.clone()));
    }
}
