package io.hetgpu.extender.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.gpu.NodeTopology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * A generated heterogeneous cluster: full kube-scheduler-shaped Node JSON (status, images, managed
 * fields) for K80, T4, V100 PCIe, DGX-1 V100, DGX A100, DGX H100 and CPU nodes, deterministic per seed.
 */
final class BenchCluster {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The GPU node types, drawn per node with a CPU node as one more choice; {@link BenchDraCluster} draws the same. */
    static final List<Function<String, NodeTopology>> TYPES = List.of(
            TestTopologies::k80x4, TestTopologies::t4x4, name -> TestTopologies.v100Pcie(name, 4),
            TestTopologies::dgx1V100, TestTopologies::dgxA100, TestTopologies::dgxH100);

    final List<String> names = new ArrayList<>();
    final List<String> nodeJson = new ArrayList<>();
    final Map<String, NodeFacts> facts = new HashMap<>();

    BenchCluster(int size, long seed) {
        var template = (ObjectNode) KubeJson.read("node-dgx1-v100.json", com.fasterxml.jackson.databind.JsonNode.class);
        var random = new Random(seed);
        for (int i = 0; i < size; i++) {
            var name = String.format("node-%05d", i);
            var node = template.deepCopy();
            var metadata = (ObjectNode) node.get("metadata");
            metadata.put("name", name);
            metadata.put("uid", java.util.UUID.nameUUIDFromBytes(name.getBytes()).toString());
            metadata.put("resourceVersion", Integer.toString(1000 + i));
            var labels = (ObjectNode) metadata.get("labels");
            labels.put("kubernetes.io/hostname", name);
            labels.put("topology.hetgpu.io/rack", "rack-" + (i / 20));
            labels.put("topology.kubernetes.io/zone", "zone-" + (i / 1000));
            var annotations = (ObjectNode) metadata.get("annotations");
            String inventory = null;
            String free = null;
            int type = random.nextInt(TYPES.size() + 1);
            if (type == TYPES.size()) {
                annotations.remove("hetgpu.io/gpu-inventory");
                annotations.remove("hetgpu.io/gpu-free");
                labels.remove(List.of("hetgpu.io/gpu.present", "hetgpu.io/gpu.model", "hetgpu.io/gpu.count"));
            } else {
                var topology = TYPES.get(type).apply(name);
                var freePositions = java.util.stream.IntStream.range(0, topology.size()).filter(p -> random.nextInt(3) > 0).toArray();
                inventory = TestTopologies.inventory(topology);
                free = TestTopologies.free(topology, freePositions);
                annotations.put("hetgpu.io/gpu-inventory", inventory);
                annotations.put("hetgpu.io/gpu-free", free);
                labels.put("hetgpu.io/gpu.model", topology.device(0).model());
                labels.put("hetgpu.io/gpu.count", Integer.toString(topology.size()));
            }
            names.add(name);
            nodeJson.add(node.toString());
            var labelMap = new HashMap<String, String>();
            labels.fields().forEachRemaining(entry -> labelMap.put(entry.getKey(), entry.getValue().asText()));
            facts.put(name, new NodeFacts(name, metadata.get("resourceVersion").asText(), labelMap, inventory, free));
        }
    }

    /** What an informer-backed extender holds once synced: every node by name, no GPU pods in flight. */
    ClusterView view() {
        // The table an InformerClusterView builds from its informers' events, built here at once.
        var snapshot = NodeSnapshot.of(names.stream().map(facts::get).toList(), Map.of());
        return new SnapshotClusterView(() -> snapshot);
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
