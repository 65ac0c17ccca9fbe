package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.Map;

/** What a synced informer-backed extender would hold, given outright: nodes by name and the GPU pods bound to each. */
public record FixedClusterView(Map<String, NodeFacts> nodes, Map<String, List<BoundPod>> pods) implements ClusterView {

    public FixedClusterView {
        nodes = Map.copyOf(nodes);
        pods = Map.copyOf(pods);
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
        return pods.getOrDefault(nodeName, List.of());
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
