package io.hetgpu.extender.http;

import io.hetgpu.extender.service.ExtenderVerbs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.WebClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Node objects as the API server serves them, and an extender over HTTP that is handed them either way
 * kube-scheduler can: whole in {@code Nodes.items} (no API server), or by {@code NodeNames} with the same
 * objects in its cluster view.
 */
final class WireCluster implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String GPU_POD = KubeJson.text("pod-pytorch-worker.json");
    static final String CPU_POD = GPU_POD.replace("\"nvidia.com/gpu\": \"4\"", "\"example.com/none\": \"0\"");

    /** The two ways kube-scheduler hands an extender its nodes. */
    enum Form { NODES, NODE_NAMES }

    private final Vertx vertx = Vertx.vertx();
    private final WebClient client = WebClient.create(vertx);
    private final ExtenderMetrics metrics = new ExtenderMetrics();
    private final ExtenderServer server;
    private final Form form;
    private final List<String> nodes;
    private final Map<String, String> byName = new java.util.HashMap<>();

    /** @param nodes Node objects as JSON */
    WireCluster(Form form, List<String> nodes) {
        this.form = form;
        this.nodes = List.copyOf(nodes);
        // Each object by its name, the first of a name: read once, not once per name asked about (5,000 x 5,000 reads).
        for (var node : nodes) {
            byName.putIfAbsent(read(node, JsonNode.class).path("metadata").path("name").asText(""), node);
        }
        var catalog = CardCatalog.defaults();
        ClusterView cluster = ClusterView.REQUEST_ONLY;
        if (form == Form.NODE_NAMES) {
            var facts = new ArrayList<NodeFacts>();
            for (var node : nodes) {
                var object = read(node, Node.class);
                if (object.getMetadata().getName() != null) {
                    // An API server has no node without a name.
                    facts.add(NodeFacts.of(object));
                }
            }
            var snapshot = NodeSnapshot.of(facts, Map.of());
            cluster = new SnapshotClusterView(() -> snapshot);
        }
        var nodeStates = new NodeStateFactory(catalog, "topology.hetgpu.io/rack");
        var verbs = ExtenderVerbs.of(cluster, new PodRequestParser("nvidia.com/gpu", catalog), nodeStates,
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
        metrics.watchNodes(nodeStates);
        server = ExtenderServerTest.join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 16 * 1024 * 1024, null, null),
                verbs, metrics));
    }

    /** A verb's answer: the HTTP status, the body as JSON, and the body's size and the request's in bytes. */
    record Answer(int status, JsonNode body, long bytes, long requestBytes) {
    }

    /** Asks {@code verb} about every node of the cluster, in order. */
    Answer ask(String verb, String pod) {
        var names = new ArrayList<String>();
        for (var node : nodes) {
            names.add(read(node, JsonNode.class).path("metadata").path("name").asText(""));
        }
        return ask(verb, pod, names);
    }

    /** Asks {@code verb} about these nodes: by name, or (Nodes form) the cluster's objects of these names. */
    Answer ask(String verb, String pod, List<String> names) {
        String body;
        if (form == Form.NODE_NAMES) {
            body = "{\"Pod\":" + pod + ",\"NodeNames\":" + write(names) + "}";
        } else {
            var items = new ArrayList<String>();
            for (var name : names) {
                var node = byName.get(name);
                if (node != null) {
                    items.add(node);
                }
            }
            body = "{\"Pod\":" + pod + ",\"Nodes\":{\"items\":[" + String.join(",", items) + "]}}";
        }
        return post("/" + verb, body);
    }

    Answer post(String path, String body) {
        var response = ExtenderServerTest.join(client.post(server.port(), "127.0.0.1", path)
                .putHeader("content-type", "application/json").sendBuffer(Buffer.buffer(body)));
        try {
            return new Answer(response.statusCode(), ANSWERS.readTree(response.bodyAsString()), response.body().length(),
                    body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        } catch (IOException e) {
            throw new AssertionError("not JSON, or a key given twice: " + response.bodyAsString(), e);
        }
    }

    /** Reads answers strictly: a key given twice in one object is an error, not the last value. */
    private static final ObjectMapper ANSWERS = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

    String metrics() {
        return metrics.scrape();
    }

    /** A Node object with these annotations (null values left out) and, when not null, this allocatable GPU count. */
    static String node(String name, Map<String, String> labels, Map<String, String> annotations, String allocatable) {
        var node = JSON.createObjectNode();
        var metadata = node.putObject("metadata");
        if (name != null) {
            metadata.put("name", name);
        }
        metadata.put("resourceVersion", "7");
        labels.forEach(metadata.putObject("labels")::put);
        ObjectNode annotationsNode = metadata.putObject("annotations");
        annotations.forEach((key, value) -> {
            if (value != null) {
                annotationsNode.put(key, value);
            }
        });
        var status = node.putObject("status");
        if (allocatable != null) {
            status.putObject("allocatable").put("nvidia.com/gpu", allocatable).put("cpu", "64");
        }
        return write(node);
    }

    /** A node with hetgpu's annotations (null ones left out) and, when not null, this allocatable GPU count. */
    static String node(String name, String inventory, String free, String allocatable) {
        var annotations = new java.util.HashMap<String, String>();
        annotations.put("hetgpu.io/gpu-inventory", inventory);
        annotations.put("hetgpu.io/gpu-free", free);
        return node(name, Map.of(), annotations, allocatable);
    }

    static <T> T read(String json, Class<T> type) {
        try {
            return KubeJson.MAPPER.readValue(json, type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        server.close();
        ExtenderServerTest.join(vertx.close());
    }
}
