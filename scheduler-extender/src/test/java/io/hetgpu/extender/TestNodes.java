package io.hetgpu.extender;

import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** NodeStates for policy tests, built the way the extender builds them: through the annotations. */
public final class TestNodes {

    private static final NodeStateFactory FACTORY = new NodeStateFactory(CardCatalog.defaults(), "topology.hetgpu.io/rack");

    private TestNodes() {
    }

    public static NodeState cpu(String name) {
        return FACTORY.state(new NodeFacts(name, "", Map.of(), null, null), List.of());
    }

    public static NodeState gpu(String name, Function<String, NodeTopology> type) {
        var topology = type.apply(name);
        return FACTORY.state(new NodeFacts(name, "", Map.of(), TestTopologies.inventory(topology), TestTopologies.allFree(topology)), List.of());
    }

    public static NodeState gpu(String name, Function<String, NodeTopology> type, int... freePositions) {
        var topology = type.apply(name);
        return FACTORY.state(new NodeFacts(name, "", Map.of(), TestTopologies.inventory(topology), TestTopologies.free(topology, freePositions)), List.of());
    }

    public static NodeState placed(NodeState node, String rack, String zone) {
        return new NodeState(node.name(), rack, zone, node.gpus(), node.freeMask());
    }

    public static Map<String, String> labels(String rack, String zone) {
        var labels = new HashMap<String, String>();
        labels.put("topology.hetgpu.io/rack", rack);
        labels.put("topology.kubernetes.io/zone", zone);
        return labels;
    }
}
