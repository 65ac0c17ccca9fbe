package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a synced informer-backed extender would hold, given outright: nodes by name, and the GPU pods bound
 * to each as a function, so a test can bind and unbind pods while the node facts stay the same objects.
 */
public record FixedClusterView(Map<String, NodeFacts> nodes, Function<String, List<BoundPod>> pods) implements ClusterView {

    public FixedClusterView {
        nodes = Map.copyOf(nodes);
    }

    public FixedClusterView(Map<String, NodeFacts> nodes, Map<String, List<BoundPod>> podsByNode) {
        this(nodes, Map.copyOf(podsByNode)::get);
    }

    @Override
    public boolean synced() {
        return true;
    }

    @Override
    public boolean knowsNodes() {
        return true;
    }

    @Override
    public NodeFacts node(String name) {
        return nodes.get(name);
    }

    @Override
    public List<BoundPod> boundPods(String nodeName) {
        var bound = pods.apply(nodeName);
        return bound == null ? List.of() : bound;
    }

    @Override
    public PlacementContext contextOf(PodRequest pod) {
        return PlacementContext.EMPTY;
    }

    @Override
    public Pod podByUid(String uid) {
        return null;
    }
}
