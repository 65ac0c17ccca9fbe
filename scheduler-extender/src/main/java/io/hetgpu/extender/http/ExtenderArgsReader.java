package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.RequestedNames;
import io.hetgpu.extender.wire.WireNode;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads {@code ExtenderArgs} as Go's encoding/json would: keys match case-insensitively, unknown keys
 * are skipped, nulls are nulls. The Pod becomes a fabric8 Pod; each Node is streamed for the few
 * fields the policy reads and otherwise left as bytes, because a 5,000-node request is tens of
 * megabytes of status, images and managed fields that the extender only has to hand back.
 */
public final class ExtenderArgsReader {

    private final ObjectMapper mapper;
    private final String resourceName;

    public ExtenderArgsReader(ObjectMapper mapper) {
        this(mapper, HetgpuKeys.DEFAULT_RESOURCE_NAME);
    }

    /** @param resourceName the GPU resource whose {@code status.allocatable} count each node's facts carry */
    public ExtenderArgsReader(ObjectMapper mapper, String resourceName) {
        this.mapper = mapper;
        this.resourceName = resourceName;
    }

    /** The mapper for Kubernetes objects: fabric8's model classes, unknown fields tolerated. */
    public static ObjectMapper kubernetesMapper() {
        return new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    public ExtenderArgs read(byte[] body) throws WireFormatException {
        try (var parser = mapper.getFactory().createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new WireFormatException("expected a JSON object with Pod and Nodes or NodeNames");
            }
            Pod pod = null;
            List<WireNode> nodes = null;
            List<String> names = null;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                var field = parser.currentName();
                var token = parser.nextToken();
                if (field.equalsIgnoreCase("Pod")) {
                    pod = token == JsonToken.VALUE_NULL ? null : pod(parser, body);
                } else if (field.equalsIgnoreCase("Nodes")) {
                    nodes = token == JsonToken.VALUE_NULL ? null : nodeList(parser, body);
                } else if (field.equalsIgnoreCase("NodeNames")) {
                    if (token == JsonToken.VALUE_NULL) {
                        names = null;
                    } else {
                        var scanned = token == JsonToken.START_ARRAY ? scan(body, (int) parser.currentTokenLocation().getByteOffset()) : null;
                        if (scanned != null && endsObject(body, scanned.close() + 1)) {
                            // The last field, as kube-scheduler writes them (Pod, Nodes, NodeNames): the object ends with
                            // the scanned array, and the parser need not skip thousands of names once more.
                            return new ExtenderArgs(pod, nodes, scanned.names());
                        }
                        if (scanned == null) {
                            names = strings(parser, "NodeNames");
                        } else {
                            names = scanned.names();
                            parser.skipChildren();
                        }
                    }
                } else {
                    parser.skipChildren();
                }
            }
            return new ExtenderArgs(pod, nodes, names);
        } catch (JsonProcessingException e) {
            var location = e.getLocation();
            throw new WireFormatException("request body is not valid ExtenderArgs JSON"
                    + (location == null ? "" : " at line " + location.getLineNr() + ", column " + location.getColumnNr())
                    + ": " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new WireFormatException("request body could not be read: " + e.getMessage());
        }
    }

    /**
     * The Pod, from the pods read lately when its JSON is byte for byte one of theirs. kube-scheduler sends
     * the same pod to filter and then to prioritize (and again while it retries), and a Pod as kube-scheduler
     * sends it (status, managed fields) costs more to build than some NodeNames answers; a byte-identical
     * body is the same object, which nothing here modifies.
     */
    private Pod pod(JsonParser parser, byte[] body) throws IOException {
        if (parser.currentToken() != JsonToken.START_OBJECT) {
            return mapper.readValue(parser, Pod.class);
        }
        int start = (int) parser.currentTokenLocation().getByteOffset();
        parser.skipChildren();
        int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
        var key = new PodBytes(body, start, end);
        var known = recentPods.get(key);
        if (known != null) {
            return known;
        }
        var pod = mapper.readValue(body, start, end - start, Pod.class);
        if (recentPods.size() >= MAX_RECENT_PODS) {
            recentPods.clear();
        }
        recentPods.put(key.copy(), pod);
        return pod;
    }

    private static final int MAX_RECENT_PODS = 64;
    private final ConcurrentHashMap<PodBytes, Pod> recentPods = new ConcurrentHashMap<>();

    /** A Pod's JSON, compared by content: a range of a request body when looking up, its own copy when kept. */
    private static final class PodBytes {
        private final byte[] bytes;
        private final int start;
        private final int end;
        private final int hash;

        PodBytes(byte[] bytes, int start, int end) {
            this(bytes, start, end, hash(bytes, start, end));
        }

        private PodBytes(byte[] bytes, int start, int end, int hash) {
            this.bytes = bytes;
            this.start = start;
            this.end = end;
            this.hash = hash;
        }

        PodBytes copy() {
            return new PodBytes(Arrays.copyOfRange(bytes, start, end), 0, end - start, hash);
        }

        /** Bytes of a pod's JSON the hash reads, spread over it; equality compares them all. */
        private static final int HASHED_BYTES = 256;

        /**
         * The length and a few hundred bytes spread evenly over the pod: equal pods hash alike, and two pods that differ
         * where it does not look (pods of one job, differing in their names) only meet in {@link #equals}, whose
         * comparison of every byte is vectorised. Hashing each of a pod's 5 KB byte by byte was a tenth of a 100-name
         * request on the event loop.
         */
        private static int hash(byte[] bytes, int start, int end) {
            int length = end - start;
            int step = Math.max(1, length / HASHED_BYTES);
            int hash = length;
            for (int i = start; i < end; i += step) {
                hash = 31 * hash + bytes[i];
            }
            return hash;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof PodBytes that && that.hash == hash
                    && Arrays.equals(bytes, start, end, that.bytes, that.start, that.end);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private List<WireNode> nodeList(JsonParser parser, byte[] body) throws IOException, WireFormatException {
        expect(parser, JsonToken.START_OBJECT, "Nodes");
        var nodes = new ArrayList<WireNode>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            var field = parser.currentName();
            var token = parser.nextToken();
            if (field.equalsIgnoreCase("items") && token == JsonToken.START_ARRAY) {
                while (parser.nextToken() == JsonToken.START_OBJECT) {
                    nodes.add(node(parser, body, nodes.size()));
                }
                expect(parser, JsonToken.END_ARRAY, "Nodes.items");
            } else {
                parser.skipChildren();
            }
        }
        return nodes;
    }

    private WireNode node(JsonParser parser, byte[] body, int index) throws IOException, WireFormatException {
        int start = (int) parser.currentTokenLocation().getByteOffset();
        String name = null;
        String resourceVersion = "";
        Map<String, String> labels = Map.of();
        String inventory = null;
        String free = null;
        String allocatable = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            var field = parser.currentName();
            var token = parser.nextToken();
            if (field.equalsIgnoreCase("status") && token == JsonToken.START_OBJECT) {
                allocatable = allocatable(parser);
                continue;
            }
            if (!field.equalsIgnoreCase("metadata") || token != JsonToken.START_OBJECT) {
                parser.skipChildren();
                continue;
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                var key = parser.currentName();
                var valueToken = parser.nextToken();
                if (key.equalsIgnoreCase("name")) {
                    name = parser.getValueAsString();
                } else if (key.equalsIgnoreCase("resourceVersion")) {
                    resourceVersion = parser.getValueAsString("");
                } else if (key.equalsIgnoreCase("labels") && valueToken == JsonToken.START_OBJECT) {
                    labels = stringMap(parser);
                } else if (key.equalsIgnoreCase("annotations") && valueToken == JsonToken.START_OBJECT) {
                    while (parser.nextToken() == JsonToken.FIELD_NAME) {
                        var annotation = parser.currentName();
                        parser.nextToken();
                        if (annotation.equals(HetgpuKeys.ANNOTATION_INVENTORY)) {
                            inventory = annotation(parser);
                        } else if (annotation.equals(HetgpuKeys.ANNOTATION_FREE)) {
                            free = annotation(parser);
                        } else {
                            parser.skipChildren();
                        }
                    }
                } else {
                    parser.skipChildren();
                }
            }
        }
        int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
        // A node without a name is refused by the service, that node only: not the whole request.
        return new WireNode(new NodeFacts(name == null ? "" : name, resourceVersion, labels, inventory, free, allocatable), body, start, end);
    }

    /**
     * An annotation's value; one that is not a string (never from an API server) is skipped and read as "",
     * which the codecs refuse for that node.
     */
    private static String annotation(JsonParser parser) throws IOException {
        var value = parser.getValueAsString();
        parser.skipChildren();
        return value == null ? "" : value;
    }

    /** {@code status.allocatable[resourceName]} as written, or null; the parser left at the end of status. */
    private String allocatable(JsonParser parser) throws IOException {
        String allocatable = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            var field = parser.currentName();
            var token = parser.nextToken();
            if (field.equalsIgnoreCase("allocatable") && token == JsonToken.START_OBJECT) {
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    var resource = parser.currentName();
                    parser.nextToken();
                    if (resource.equals(resourceName)) {
                        // A quantity is a string on the wire; a number (hand-written JSON) is read as its text.
                        var value = parser.currentToken();
                        allocatable = value.isScalarValue() && value != JsonToken.VALUE_NULL ? parser.getText() : null;
                    }
                    parser.skipChildren();
                }
            } else {
                parser.skipChildren();
            }
        }
        return allocatable;
    }

    private static Map<String, String> stringMap(JsonParser parser) throws IOException {
        var map = new HashMap<String, String>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            var key = parser.currentName();
            parser.nextToken();
            var value = parser.getValueAsString();
            if (value != null) {
                map.put(key, value);
            } else {
                parser.skipChildren();
            }
        }
        return map;
    }

    /**
     * The names as ranges of the body ({@link RequestedNames}) and where their array closes: an array of strings, as
     * kube-scheduler sends, is scanned here; anything else (a number, a nested value) is read by the parser, which says
     * what is wrong with it.
     */
    private record Scanned(RequestedNames names, int close) {
    }

    /** Whether only blanks, the object's closing brace and blanks follow from {@code at} to the body's end. */
    private static boolean endsObject(byte[] body, int at) {
        at = skipBlanks(body, at);
        return at < body.length && body[at] == '}' && skipBlanks(body, at + 1) == body.length;
    }

    /** The array of strings opening at {@code open}, or null when it holds anything else. */
    private Scanned scan(byte[] body, int open) {
        if (open < 0 || open >= body.length || body[open] != '[') {
            return null;
        }
        int capacity = 16;
        var starts = new int[capacity];
        var ends = new int[capacity];
        var plain = new boolean[capacity];
        int count = 0;
        int at = skipBlanks(body, open + 1);
        if (at < body.length && body[at] == ']') {
            return new Scanned(new RequestedNames(body, new int[0], new int[0], new boolean[0], index -> ""), at);
        }
        while (at < body.length && body[at] == '"') {
            int start = at + 1;
            boolean simple = true;
            int end = start;
            while (end < body.length && body[end] != '"') {
                if (body[end] == '\\') {
                    simple = false;
                    end++;
                } else if (body[end] < 0x20) {
                    // Bytes >= 0x80 (UTF-8) are negative: they go the String way too.
                    simple = false;
                }
                end++;
            }
            if (end >= body.length) {
                return null;
            }
            if (count == capacity) {
                capacity *= 2;
                starts = Arrays.copyOf(starts, capacity);
                ends = Arrays.copyOf(ends, capacity);
                plain = Arrays.copyOf(plain, capacity);
            }
            starts[count] = start;
            ends[count] = end;
            plain[count] = simple;
            count++;
            at = skipBlanks(body, end + 1);
            if (at < body.length && body[at] == ']') {
                var first = Arrays.copyOf(starts, count);
                var last = Arrays.copyOf(ends, count);
                return new Scanned(new RequestedNames(body, first, last, Arrays.copyOf(plain, count), index -> decode(body, first[index], last[index])), at);
            }
            if (at >= body.length || body[at] != ',') {
                return null;
            }
            at = skipBlanks(body, at + 1);
        }
        return null;
    }

    private static int skipBlanks(byte[] body, int at) {
        while (at < body.length && (body[at] == ' ' || body[at] == '\n' || body[at] == '\r' || body[at] == '\t')) {
            at++;
        }
        return at;
    }

    /** A name with escapes or beyond ASCII, as JSON decodes it. */
    private String decode(byte[] body, int start, int end) {
        try {
            return mapper.readValue(body, start - 1, end - start + 2, String.class);
        } catch (IOException e) {
            throw new IllegalStateException("a node name scanned as a JSON string does not decode as one", e);
        }
    }

    static List<String> strings(JsonParser parser, String field) throws IOException, WireFormatException {
        expect(parser, JsonToken.START_ARRAY, field);
        var values = new ArrayList<String>();
        JsonToken token;
        while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
            if (token != JsonToken.VALUE_STRING) {
                throw new WireFormatException(field + "[" + values.size() + "]: expected a node name, got " + token);
            }
            values.add(parser.getText());
        }
        return values;
    }

    private static void expect(JsonParser parser, JsonToken expected, String field) throws WireFormatException {
        if (parser.currentToken() != expected) {
            throw new WireFormatException(field + ": expected " + (expected == JsonToken.START_ARRAY ? "an array" : "an object")
                    + ", got " + parser.currentToken());
        }
    }
}
