package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.http.WireCluster.Form;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Every field of a training pod, and of the nodes kube-scheduler sends whole when the extender keeps no cache, one at a
 * time, set to a value kube-scheduler would never send (null, a negative or huge number, an empty string, an array or
 * object where the other is expected), through filter, prioritize and (for the pod, which also stands as its own
 * preemption victim) preempt over HTTP: each answer is JSON kube-scheduler can read and none is an internal error. Such answers said "hetgpu extender internal error: java.lang.ArithmeticException" for
 * a count of 1e400 GPUs and a NullPointerException for a null among a pod's volumes or owners; the user saw neither
 * the field nor the value.
 */
class RequestFieldFuzzTest {

    private static final JsonNodeFactory VALUES = JsonNodeFactory.instance;
    private static final List<JsonNode> ODD_VALUES = List.of(VALUES.nullNode(), VALUES.numberNode(-1),
            VALUES.numberNode(new BigInteger("18446744073709551616")), VALUES.textNode("1e400"), VALUES.textNode(""),
            VALUES.arrayNode(), VALUES.objectNode(), VALUES.textNode("\u0000"));

    @Test
    void noFieldOfAPodMakesAnInternalError() {
        var pod = WireCluster.read(WireCluster.GPU_POD, JsonNode.class);
        var nodes = List.of(KubeJson.text("node-dgx1-v100.json"), KubeJson.text("node-gfd-v100.json"), KubeJson.text("node-cpu.json"));
        var failures = new ArrayList<String>();
        int asked = 0;
        try (var cluster = new WireCluster(Form.NODES, nodes)) {
            var names = nodes.stream().map(node -> WireCluster.read(node, JsonNode.class).path("metadata").path("name").asText()).toList();
            for (var path : paths(pod, "")) {
                for (var value : ODD_VALUES) {
                    var changed = pod.deepCopy();
                    set(changed, path, value);
                    var text = WireCluster.write(changed);
                    var victims = "{\"" + names.getFirst() + "\":{\"Pods\":[" + text + "],\"NumPDBViolations\":0}}";
                    var answers = List.of(cluster.ask("filter", text, names), cluster.ask("prioritize", text, names),
                            cluster.post("/preempt", "{\"Pod\":" + text + ",\"NodeNameToVictims\":" + victims + "}"));
                    for (var answer : answers) {
                        asked++;
                        if (!(answer.status() == 200 || answer.status() == 400) || answer.body().toString().contains("internal error")) {
                            failures.add(path + " = " + value + ": " + answer.status() + " " + answer.body());
                        }
                    }
                }
            }
        }
        assertThat(asked).as("requests sent").isGreaterThan(1_000);
        assertThat(failures).isEmpty();
    }

    @Test
    void noFieldOfANodeKubeSchedulerSendsWholeMakesAnInternalError() {
        var nodes = List.of(KubeJson.text("node-dgx1-v100.json"), KubeJson.text("node-gfd-v100.json"), KubeJson.text("node-cpu.json"));
        var failures = new ArrayList<String>();
        int asked = 0;
        try (var cluster = new WireCluster(Form.NODES, List.of())) {
            for (int n = 0; n < nodes.size(); n++) {
                var node = WireCluster.read(nodes.get(n), JsonNode.class);
                var paths = paths(node, "");
                for (int p = 0; p < paths.size(); p++) {
                    // Three of the odd values per field, a different three for the next field: every value meets
                    // every kind of field, in a few seconds.
                    for (int v = 0; v < 3; v++) {
                        var value = ODD_VALUES.get((p * 3 + v) % ODD_VALUES.size());
                        var changed = node.deepCopy();
                        set(changed, paths.get(p), value);
                        var items = new ArrayList<>(nodes);
                        items.set(n, WireCluster.write(changed));
                        for (var verb : List.of("/filter", "/prioritize")) {
                            var answer = cluster.post(verb, "{\"Pod\":" + WireCluster.GPU_POD + ",\"Nodes\":{\"items\":["
                                    + String.join(",", items) + "]}}");
                            asked++;
                            if (!(answer.status() == 200 || answer.status() == 400) || answer.body().toString().contains("internal error")) {
                                failures.add(n + ":" + paths.get(p) + " = " + value + ": " + answer.status() + " " + answer.body());
                            }
                        }
                    }
                }
            }
        }
        assertThat(asked).as("requests sent").isGreaterThan(2_000);
        assertThat(failures).isEmpty();
    }

    /**
     * Every field's path below {@code node} as a JSON Pointer ("/spec/containers/0/name", a "/" in a key written "~1"),
     * objects and arrays before their members.
     */
    private static List<String> paths(JsonNode node, String prefix) {
        var paths = new ArrayList<String>();
        Consumer<String> below = path -> {
            paths.add(path);
            paths.addAll(paths(at(node, path.substring(prefix.length() + 1)), path));
        };
        if (node.isObject()) {
            node.fieldNames().forEachRemaining(name -> below.accept(prefix + "/" + name.replace("~", "~0").replace("/", "~1")));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                below.accept(prefix + "/" + i);
            }
        }
        return paths;
    }

    private static JsonNode at(JsonNode node, String step) {
        return node.isArray() ? node.get(Integer.parseInt(step)) : node.get(unescape(step));
    }

    private static String unescape(String step) {
        return step.replace("~1", "/").replace("~0", "~");
    }

    private static void set(JsonNode root, String path, JsonNode value) {
        int last = path.lastIndexOf('/');
        var parent = root.at(path.substring(0, last));
        var step = path.substring(last + 1);
        if (parent instanceof ArrayNode array) {
            array.set(Integer.parseInt(step), value);
        } else {
            ((ObjectNode) parent).set(unescape(step), value);
        }
    }
}
