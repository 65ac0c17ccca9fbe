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

    /**
     * Builds Jackson's reader of Pods now, before any request. fabric8's Pod reaches some hundreds of model classes,
     * each loaded and introspected when the first pod is read: most of a second, which the first pod kube-scheduler
     * sends after a restart would otherwise wait.
     */
    public void prepare() {
        try {
            mapper.readValue("{}", Pod.class);
        } catch (IOException e) {
            throw new IllegalStateException("Jackson cannot read an empty Pod: " + e.getMessage(), e);
        }
    }

    public ExtenderArgs read(byte[] body) throws WireFormatException {
        int at = skipBlanks(body, 0);
        if (at >= body.length || body[at] != '{') {
            throw new WireFormatException("expected a JSON object with Pod and Nodes or NodeNames");
        }
        Pod pod = null;
        List<WireNode> nodes = null;
        List<String> names = null;
        at = skipBlanks(body, at + 1);
        if (at < body.length && body[at] == '}') {
            return new ExtenderArgs(null, null, null);
        }
        while (true) {
            if (at >= body.length || body[at] != '"') {
                throw invalid(body, at, "expected a field name");
            }
            int keyEnd = endOfString(body, at);
            var field = Field.of(body, at, keyEnd, this);
            at = skipBlanks(body, keyEnd);
            if (at >= body.length || body[at] != ':') {
                throw invalid(body, at, "expected ':' after a field name");
            }
            int value = skipBlanks(body, at + 1);
            int end;
            if (isNull(body, value)) {
                end = value + 4;
                switch (field) {
                    case POD -> pod = null;
                    case NODES -> nodes = null;
                    case NODE_NAMES -> names = null;
                    case OTHER -> { }
                }
            } else if (field == Field.POD) {
                var known = latest;
                if (known != null && known.startsAt(body, value)) {
                    // Byte for byte the pod read last, so it ends where that one did: no scan of its kilobytes for the end.
                    end = value + known.json().length;
                    pod = known.pod();
                } else {
                    end = endOfValue(body, value);
                    pod = pod(body, value, end);
                }
            } else if (field == Field.NODE_NAMES && scan(body, value) instanceof Scanned scanned) {
                // Thousands of names: scanned once, where they are read.
                end = scanned.close() + 1;
                names = scanned.names();
            } else {
                // Whole nodes, names that are not all strings, a field the extender does not read: Jackson reads the value
                // and says where it ends.
                var parsed = parsed(body, value, field);
                end = parsed.end();
                if (field == Field.NODES) {
                    nodes = parsed.nodes();
                } else if (field == Field.NODE_NAMES) {
                    names = parsed.names();
                }
            }
            at = skipBlanks(body, end);
            if (at < body.length && body[at] == ',') {
                at = skipBlanks(body, at + 1);
            } else if (at < body.length && body[at] == '}') {
                return new ExtenderArgs(pod, nodes, names);
            } else {
                throw invalid(body, at, "expected ',' or '}' after a field's value");
            }
        }
    }

    /**
     * The fields of ExtenderArgs the extender reads, matched as Go's encoding/json matches them: without regard to
     * case. A name with escapes or beyond ASCII is decoded first; kube-scheduler writes {@code "Pod"} as is.
     */
    private enum Field {
        POD, NODES, NODE_NAMES, OTHER;

        static Field of(byte[] body, int open, int end, ExtenderArgsReader reader) throws WireFormatException {
            boolean plain = true;
            for (int i = open + 1; i < end - 1 && plain; i++) {
                plain = body[i] != '\\' && body[i] > 0;
            }
            if (plain) {
                return asciiEquals(body, open + 1, end - 1, "Pod") ? POD
                        : asciiEquals(body, open + 1, end - 1, "Nodes") ? NODES
                        : asciiEquals(body, open + 1, end - 1, "NodeNames") ? NODE_NAMES : OTHER;
            }
            var name = reader.decode(body, open + 1, end - 1);
            return name.equalsIgnoreCase("Pod") ? POD : name.equalsIgnoreCase("Nodes") ? NODES
                    : name.equalsIgnoreCase("NodeNames") ? NODE_NAMES : OTHER;
        }

        private static boolean asciiEquals(byte[] body, int start, int end, String name) {
            if (end - start != name.length()) {
                return false;
            }
            for (int i = 0; i < name.length(); i++) {
                if ((body[start + i] | 0x20) != (name.charAt(i) | 0x20)) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Where the JSON value starting at {@code at} ends: its strings are stepped over and its brackets counted, nothing
     * more. Whatever the extender then reads from the value is parsed whole by Jackson, which says what is wrong with it;
     * a pod's bytes the reader has already parsed once need no second look.
     */
    private static int endOfValue(byte[] body, int at) throws WireFormatException {
        if (at >= body.length) {
            throw invalid(body, at, "expected a value");
        }
        byte first = body[at];
        if (first == '"') {
            return endOfString(body, at);
        }
        if (first != '{' && first != '[') {
            int end = at;
            while (end < body.length && body[end] != ',' && body[end] != '}' && body[end] != ']' && !blank(body[end])) {
                end++;
            }
            if (end == at) {
                throw invalid(body, at, "expected a value");
            }
            return end;
        }
        int depth = 0;
        int i = at;
        while (i < body.length) {
            byte c = body[i];
            if (c == '"') {
                i = endOfString(body, i);
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
            i++;
        }
        throw invalid(body, at, (first == '{' ? "an object" : "an array") + " that does not end");
    }

    /** Just past the closing quote of the string whose opening quote is at {@code open}. */
    private static int endOfString(byte[] body, int open) throws WireFormatException {
        for (int i = open + 1; i < body.length; i++) {
            if (body[i] == '\\') {
                i++;
            } else if (body[i] == '"') {
                return i + 1;
            }
        }
        throw invalid(body, open, "a string that does not end");
    }

    private static boolean blank(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    /** A malformed request, named by where in it: the line and column as an editor counts them. */
    private static WireFormatException invalid(byte[] body, int at, String problem) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < Math.min(at, body.length); i++) {
            if (body[i] == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new WireFormatException("request body is not valid ExtenderArgs JSON at line " + line + ", column "
                + (at - lineStart + 1) + ": " + problem);
    }

    /**
     * Jackson's complaint about the value at {@code start}, with its place in the whole request. Jackson counts lines and
     * columns from the value's start, so where its message names a place of its own (an array's or object's start), that
     * part is left out rather than given wrong.
     */
    private static WireFormatException invalid(byte[] body, int start, JsonProcessingException e) {
        var location = e.getLocation();
        long offset = location == null || location.getByteOffset() < 0 ? 0 : location.getByteOffset();
        var message = JACKSON_PLACE.matcher(String.valueOf(e.getOriginalMessage())).replaceAll("");
        return invalid(body, (int) Math.min(body.length, start + offset), message);
    }

    /** " (for Array starting at [Source: ...; line: 1, column: 52])" in Jackson's messages. */
    private static final java.util.regex.Pattern JACKSON_PLACE = java.util.regex.Pattern.compile("\\s*\\(for \\w+ starting at \\[Source: [^\\]]*\\]\\)");

    private static boolean isNull(byte[] body, int at) {
        return at + 4 <= body.length && body[at] == 'n' && body[at + 1] == 'u' && body[at + 2] == 'l' && body[at + 3] == 'l'
                && (at + 4 == body.length || !Character.isLetterOrDigit(body[at + 4]));
    }

    /** A value Jackson read, and where in the body it ended. */
    private record Parsed(int end, List<WireNode> nodes, List<String> names) {
    }

    /**
     * The value at {@code start} read by Jackson; an object or array from there to the body's end, where the parser stops
     * at its last token and what follows is read here.
     */
    private Parsed parsed(byte[] body, int start, Field field) throws WireFormatException {
        // A number or a word at the top of a parser must be followed by a blank: such a value is read alone.
        boolean structured = start < body.length && (body[start] == '{' || body[start] == '[');
        int limit = structured ? body.length : endOfValue(body, start);
        try (var parser = mapper.getFactory().createParser(body, start, limit - start)) {
            parser.nextToken();
            List<WireNode> nodes = null;
            List<String> names = null;
            switch (field) {
                case NODES -> nodes = nodeList(parser, body, start);
                case NODE_NAMES -> names = strings(parser, "NodeNames");
                default -> parser.skipChildren();
            }
            // A string is read lazily: finished, the parser stands just past its last byte, as past a bracket or a number.
            parser.finishToken();
            return new Parsed(structured ? start + (int) parser.currentLocation().getByteOffset() : limit, nodes, names);
        } catch (JsonProcessingException e) {
            throw invalid(body, start, e);
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
    private Pod pod(byte[] body, int start, int end) throws WireFormatException {
        var key = new PodBytes(body, start, end);
        var known = recentPods.get(key);
        if (known != null) {
            latest = known;
            return known.pod();
        }
        Pod pod;
        try {
            pod = mapper.readValue(body, start, end - start, Pod.class);
        } catch (JsonProcessingException e) {
            throw invalid(body, start, e);
        } catch (IOException e) {
            throw new WireFormatException("request body could not be read: " + e.getMessage());
        }
        if (body[start] != '{') {
            return pod;
        }
        if (recentPods.size() >= MAX_RECENT_PODS) {
            recentPods.clear();
        }
        var kept = key.copy();
        var read = new KnownPod(kept.bytes, pod);
        recentPods.put(kept, read);
        latest = read;
        return pod;
    }

    private static final int MAX_RECENT_PODS = 64;
    private final ConcurrentHashMap<PodBytes, KnownPod> recentPods = new ConcurrentHashMap<>();
    /**
     * The pod read last: kube-scheduler asks prioritize right after filter, for the same pod. Shared by the event loops;
     * one that finds another's pod here only reads that pod's end the long way.
     */
    private volatile KnownPod latest;

    /** A pod's JSON as it came (a whole object) and the Pod read from it. */
    private record KnownPod(byte[] json, Pod pod) {

        /**
         * Whether {@code body} holds this pod's JSON from {@code at}. A JSON value ends where its own bytes say, so the
         * value there is this one and ends where it did, whatever follows it.
         */
        boolean startsAt(byte[] body, int at) {
            return body.length - at >= json.length && Arrays.equals(body, at, at + json.length, json, 0, json.length);
        }
    }

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

    /** @param base where in the body the parser's input starts */
    private List<WireNode> nodeList(JsonParser parser, byte[] body, int base) throws IOException, WireFormatException {
        expect(parser, JsonToken.START_OBJECT, "Nodes");
        var nodes = new ArrayList<WireNode>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            var field = parser.currentName();
            var token = parser.nextToken();
            if (field.equalsIgnoreCase("items") && token == JsonToken.START_ARRAY) {
                while (parser.nextToken() == JsonToken.START_OBJECT) {
                    nodes.add(node(parser, body, base));
                }
                expect(parser, JsonToken.END_ARRAY, "Nodes.items");
            } else {
                parser.skipChildren();
            }
        }
        return nodes;
    }

    private WireNode node(JsonParser parser, byte[] body, int base) throws IOException, WireFormatException {
        int start = base + (int) parser.currentTokenLocation().getByteOffset();
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
        int end = base + (int) parser.currentTokenLocation().getByteOffset() + 1;
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

    /** The array of strings opening at {@code open}, or null when it holds anything else. */
    private Scanned scan(byte[] body, int open) {
        if (open < 0 || open >= body.length || body[open] != '[') {
            return null;
        }
        int capacity = 0;
        var starts = new int[0];
        var ends = new int[0];
        var plain = new boolean[0];
        int count = 0;
        int at = skipBlanks(body, open + 1);
        if (at < body.length && body[at] == ']') {
            return new Scanned(new RequestedNames(body, starts, ends, plain, 0, index -> ""), at);
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
                capacity = count == 0 ? expectedNames(body.length - open, end - start) : capacity + (capacity >> 1) + 16;
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
                var first = starts;
                var last = ends;
                return new Scanned(new RequestedNames(body, first, last, plain, count, index -> decode(body, first[index], last[index])), at);
            }
            if (at >= body.length || body[at] != ',') {
                return null;
            }
            at = skipBlanks(body, at + 1);
        }
        return null;
    }

    /**
     * How many names to make room for, from the bytes left and the first name's length: a cluster's node names are
     * mostly of a length, and the names are the last field kube-scheduler writes. Grown from 16 by doubling, the offsets
     * of 15,000 names were allocated twice over and copied once more to their size: 0.43 MB for a 0.2 MB request.
     * Never more than the bytes left could hold (three bytes a name at the least: two quotes and a comma), nor more than
     * {@link #MOST_NAMES_EXPECTED}: where fields follow the names (a hand-written request with the Pod last), the bytes
     * left say little, and a guess from them would be megabytes of offsets for a few names.
     */
    static int expectedNames(int bytesLeft, int firstNameLength) {
        long byFirst = bytesLeft / (firstNameLength + 3L);
        return (int) Math.min(Math.min(byFirst + (byFirst >> 3) + 16, bytesLeft / 3L + 1), MOST_NAMES_EXPECTED);
    }

    /** The most names room is made for before they are counted: a 15,000-node cluster's; more grow the room as they come. */
    static final int MOST_NAMES_EXPECTED = 16 * 1024;

    private static int skipBlanks(byte[] body, int at) {
        while (at < body.length && blank(body[at])) {
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
