package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a synced informer-backed extender would hold, given outright: nodes by name, and the GPU pods bound
 * to each as a function, so a test can bind and unbind pods while the node facts stay the same objects.
 */
public record FixedClusterView(Map<String, NodeFacts> facts, Function<String, List<BoundPod>> pods) implements ClusterView {

    public FixedClusterView {
        facts = Map.copyOf(facts);
    }

    public FixedClusterView(Map<String, NodeFacts> facts, Map<String, List<BoundPod>> podsByNode) {
        this(facts, Map.copyOf(podsByNode)::get);
    }

    @Override
    public boolean synced() {
        return true;
    }

    @Override
    public boolean knowsNodes() {
        return true;
    }

    /** A new snapshot on every call (the pods may have changed), with the same facts objects in it. */
    @Override
    public NodeSnapshot nodes() {
        var podsByNode = new HashMap<String, List<BoundPod>>();
        facts.keySet().forEach(name -> podsByNode.put(name, boundPods(name)));
        return NodeSnapshot.of(List.copyOf(facts.values()), podsByNode);
    }

    @Override
    public NodeFacts node(String name) {
        return facts.get(name);
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
