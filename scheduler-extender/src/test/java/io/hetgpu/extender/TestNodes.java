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

    /** A node hetgpu's DRA driver serves: its GPUs read from the one slice the driver publishes, all free. */
    public static NodeState hetgpuDra(String name, Function<String, NodeTopology> type) {
        return FACTORY.state(hetgpuDraFacts(name, type.apply(name)), List.of());
    }

    /** What the informers know of a node hetgpu's DRA driver serves: no annotations, the one slice it publishes. */
    public static NodeFacts hetgpuDraFacts(String name, NodeTopology topology) {
        var catalog = CardCatalog.defaults();
        var slice = TestDra.slice("s-" + name, name, TestDra.HETGPU, io.hetgpu.gpu.inventory.HetgpuDra.pool(name), 1, 1,
                TestDra.hetgpuGpus(topology, catalog));
        var read = io.hetgpu.extender.model.SliceReader.read(name, List.of(slice), catalog);
        return new NodeFacts(name, "1", Map.of(), null, null, null, true, read);
    }

    /** A node served by NVIDIA's device plugin, labelled by GPU Feature Discovery: {@code labels} plus its allocatable count. */
    public static NodeState featureDiscovery(String name, Map<String, String> labels, int allocatable) {
        return FACTORY.state(new NodeFacts(name, "", labels, null, null, Integer.toString(allocatable)), List.of());
    }

    /** GFD's labels for {@code count} GPUs of a product, as GFD writes them. */
    public static Map<String, String> gfdLabels(String product, long memoryMiB, int major, int minor, int count) {
        var labels = new HashMap<String, String>();
        labels.put("nvidia.com/gpu.product", product);
        labels.put("nvidia.com/gpu.memory", Long.toString(memoryMiB));
        labels.put("nvidia.com/gpu.compute.major", Integer.toString(major));
        labels.put("nvidia.com/gpu.compute.minor", Integer.toString(minor));
        labels.put("nvidia.com/gpu.count", Integer.toString(count));
        labels.put("nvidia.com/gpu.replicas", "1");
        labels.put("nvidia.com/gpu.family", "volta");
        return labels;
    }

    /** A node that offers {@code allocatable} GPUs and says nothing else about them. */
    public static NodeState allocatableOnly(String name, int allocatable) {
        return FACTORY.state(new NodeFacts(name, "", Map.of(), null, null, Integer.toString(allocatable)), List.of());
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
