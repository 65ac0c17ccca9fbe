package io.hetgpu.extender.throughput;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.gpu.Quote;
import java.util.ArrayList;
import java.util.List;

/**
 * The learner's state as JSON, what the ConfigMap {@code hetgpu-throughputs} holds under {@code throughputs.json}:
 *
 * <pre>{"schema": 1, "classes": [{"class": "resnet50", "cards": [{"card": "V100",
 *   "namespaces": [{"namespace": "team-a", "gpus": 1, "throughputs": [412.5, 409.1]}]}]}]}</pre>
 *
 * {@code gpus} is the size bucket of the pods measured (1; 2 for 2 to 4 GPUs; 5 for 5 and more), 1 when absent.
 * {@code runs}, written only where it is more than the throughputs listed, is how many runs a window summarised to fit
 * the ConfigMap stands for ({@link StateFit}); an older reader ignores it and reads the summary as a short window.
 *
 * Lists are in the learner's order (least recently seen class first, oldest sample first). A document is read whole
 * or refused with a message naming the field and its value; its size is bounded ({@link #MAX_CHARS}, the ConfigMap's
 * own limit is 1 MiB) and so is every list in it, so a hand-edited or hostile ConfigMap costs a log line, not memory.
 */
public final class LearnedStateCodec {

    public static final int SCHEMA = 1;
    /** A ConfigMap holds at most 1 MiB. */
    public static final int MAX_CHARS = 1 << 20;
    /** No list in a document is longer: the learner's own bounds are lower, and restore applies them. */
    static final int MAX_LIST = 4096;

    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        JSON.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(16).build());
    }

    private LearnedStateCodec() {
    }

    public static String toJson(LearnedState state) {
        var root = JSON.createObjectNode();
        root.put("schema", SCHEMA);
        var classes = root.putArray("classes");
        for (var workload : state.classes()) {
            var classNode = classes.addObject();
            classNode.put("class", workload.workloadClass());
            var cards = classNode.putArray("cards");
            for (var card : workload.cards()) {
                var cardNode = cards.addObject();
                cardNode.put("card", card.cardModel());
                var namespaces = cardNode.putArray("namespaces");
                for (var ns : card.namespaces()) {
                    var nsNode = namespaces.addObject();
                    nsNode.put("namespace", ns.namespace());
                    nsNode.put("gpus", ns.gpus());
                    if (ns.summarised()) {
                        nsNode.put("runs", ns.runs());
                    }
                    var values = nsNode.putArray("throughputs");
                    ns.throughputsPerGpu().forEach(values::add);
                }
            }
        }
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the learned state", e);
        }
    }

    /** The state a document holds; {@link IllegalArgumentException} naming the field and value when it is not one. */
    public static LearnedState fromJson(String json) {
        if (json == null || json.isBlank()) {
            throw new IllegalArgumentException("throughputs.json: empty");
        }
        if (json.length() > MAX_CHARS) {
            throw new IllegalArgumentException("throughputs.json: " + json.length() + " characters, at most " + MAX_CHARS);
        }
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("throughputs.json: not JSON (" + Quote.of(e.getOriginalMessage()) + ")");
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("throughputs.json: expected an object");
        }
        var schema = root.get("schema");
        if (schema == null || !schema.isInt() || schema.intValue() != SCHEMA) {
            throw new IllegalArgumentException("schema: expected " + SCHEMA + ", got " + Quote.of(schema));
        }
        var classes = new ArrayList<LearnedState.ClassSamples>();
        var classNodes = array(root, "classes", "classes");
        for (int c = 0; c < classNodes.size(); c++) {
            var at = "classes[" + c + "]";
            var classNode = object(classNodes.get(c), at);
            var workload = text(classNode, "class", at + ".class");
            var cards = new ArrayList<LearnedState.CardSamples>();
            var cardNodes = array(classNode, "cards", at + ".cards");
            for (int k = 0; k < cardNodes.size(); k++) {
                var cardAt = at + ".cards[" + k + "]";
                var cardNode = object(cardNodes.get(k), cardAt);
                var card = text(cardNode, "card", cardAt + ".card");
                var namespaces = new ArrayList<LearnedState.NamespaceSamples>();
                var nsNodes = array(cardNode, "namespaces", cardAt + ".namespaces");
                for (int n = 0; n < nsNodes.size(); n++) {
                    var nsAt = cardAt + ".namespaces[" + n + "]";
                    var nsNode = object(nsNodes.get(n), nsAt);
                    var namespace = text(nsNode, "namespace", nsAt + ".namespace");
                    var values = new ArrayList<Double>();
                    var valueNodes = array(nsNode, "throughputs", nsAt + ".throughputs");
                    for (int v = 0; v < valueNodes.size(); v++) {
                        var value = valueNodes.get(v);
                        if (!value.isNumber() || !(value.doubleValue() > 0) || Double.isInfinite(value.doubleValue())) {
                            throw new IllegalArgumentException(nsAt + ".throughputs[" + v + "]: expected a number above 0, got "
                                    + Quote.of(value));
                        }
                        values.add(value.doubleValue());
                    }
                    var gpus = nsNode.get("gpus");
                    if (gpus != null && (!gpus.isInt() || !(gpus.intValue() == 1 || gpus.intValue() == 2 || gpus.intValue() == 5))) {
                        throw new IllegalArgumentException(nsAt + ".gpus: expected 1, 2 or 5 (a size bucket), got " + Quote.of(gpus));
                    }
                    var runs = nsNode.get("runs");
                    if (runs != null && (!runs.isInt() || runs.intValue() < values.size() || runs.intValue() > LearningSettings.MAX_WINDOW)) {
                        throw new IllegalArgumentException(nsAt + ".runs: expected from " + values.size() + " (the throughputs listed) to "
                                + LearningSettings.MAX_WINDOW + ", got " + Quote.of(runs));
                    }
                    namespaces.add(new LearnedState.NamespaceSamples(namespace, values, gpus == null ? 1 : gpus.intValue(),
                            runs == null ? values.size() : runs.intValue()));
                }
                cards.add(new LearnedState.CardSamples(card, namespaces));
            }
            classes.add(new LearnedState.ClassSamples(workload, cards));
        }
        return new LearnedState(classes);
    }

    private static ArrayNode array(JsonNode parent, String field, String at) {
        var node = parent.get(field);
        if (node == null || !node.isArray()) {
            throw new IllegalArgumentException(at + ": expected a list, got " + Quote.of(node));
        }
        if (node.size() > MAX_LIST) {
            throw new IllegalArgumentException(at + ": " + node.size() + " entries, at most " + MAX_LIST);
        }
        return (ArrayNode) node;
    }

    private static ObjectNode object(JsonNode node, String at) {
        if (!node.isObject()) {
            throw new IllegalArgumentException(at + ": expected an object, got " + Quote.of(node));
        }
        return (ObjectNode) node;
    }

    private static String text(JsonNode parent, String field, String at) {
        var node = parent.get(field);
        if (node == null || !node.isTextual() || node.textValue().isBlank()) {
            throw new IllegalArgumentException(at + ": expected a name, got " + Quote.of(node));
        }
        return node.textValue();
    }
}
