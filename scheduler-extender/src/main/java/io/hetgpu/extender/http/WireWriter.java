package io.hetgpu.extender.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * Writes extender answers with the capitalised keys of the Go structs (which carry no JSON tags).
 * Nodes that fit are copied from the request body as they came.
 *
 * <p>The JSON is laid out by hand straight into the response buffer. Its strings are node names and
 * rejection reasons, a few thousand of each that recur from request to request (the same node state
 * gives the same reason, held as the same String), so each is escaped once and then copied as bytes:
 * a 5,000-node filter answer is ~200 KB of them.
 */
public final class WireWriter {

    /** Bounds the escaped strings; more than names and reasons of the largest cluster, so it rarely clears. */
    private static final int MAX_ENCODED = 100_000;
    /** Strings longer than this are written without keeping them (error texts, not names or reasons). */
    private static final int MAX_ENCODED_LENGTH = 1_024;

    private static final byte[] NULL = ascii("null");
    private static final byte[] FILTER_START = ascii("{\"Nodes\":");
    private static final byte[] ITEMS_START = ascii("{\"metadata\":{},\"items\":[");
    private static final byte[] ITEMS_END = ascii("]}");
    private static final byte[] NODE_NAMES = ascii(",\"NodeNames\":");
    private static final byte[] FAILED = ascii(",\"FailedNodes\":");
    private static final byte[] UNRESOLVABLE = ascii(",\"FailedAndUnresolvableNodes\":");
    private static final byte[] ERROR = ascii(",\"Error\":");
    private static final byte[] HOST = ascii("{\"Host\":");
    private static final byte[] SCORE = ascii(",\"Score\":");
    private static final byte[] ERROR_ONLY = ascii("{\"Error\":");
    /** Scores as kube-scheduler's extender scale has them, 0..10, written once. */
    private static final byte[][] SCORES = IntStream.rangeClosed(0, 10)
            .mapToObj(score -> ascii(Integer.toString(score))).toArray(byte[][]::new);

    private final JsonStringEncoder encoder = JsonStringEncoder.getInstance();
    /** Each string as a quoted, escaped JSON string in UTF-8. Derived data only. */
    private final ConcurrentHashMap<String, byte[]> encoded = new ConcurrentHashMap<>();

    public Buffer filterResult(FilterResult result) {
        int estimate = 128 + result.error().length();
        if (result.nodes() != null) {
            for (var node : result.nodes()) {
                estimate += node.end() - node.start() + 1;
            }
        }
        estimate += result.nodeNames() == null ? 0 : result.nodeNames().size() * 24;
        estimate += (result.failedNodes().size() + result.failedAndUnresolvableNodes().size()) * 96;
        var out = Buffer.buffer(estimate);
        out.appendBytes(FILTER_START);
        if (result.nodes() == null) {
            out.appendBytes(NULL);
        } else {
            out.appendBytes(ITEMS_START);
            for (int i = 0; i < result.nodes().size(); i++) {
                var node = result.nodes().get(i);
                if (i > 0) {
                    out.appendByte((byte) ',');
                }
                out.appendBytes(node.body(), node.start(), node.end() - node.start());
            }
            out.appendBytes(ITEMS_END);
        }
        out.appendBytes(NODE_NAMES);
        writeStrings(out, result.nodeNames());
        out.appendBytes(FAILED);
        writeMap(out, result.failedNodes());
        out.appendBytes(UNRESOLVABLE);
        writeMap(out, result.failedAndUnresolvableNodes());
        out.appendBytes(ERROR);
        writeString(out, result.error());
        return out.appendByte((byte) '}');
    }

    public Buffer hostPriorities(List<HostPriority> priorities) {
        var out = Buffer.buffer(32 + priorities.size() * 40);
        out.appendByte((byte) '[');
        for (int i = 0; i < priorities.size(); i++) {
            var priority = priorities.get(i);
            if (i > 0) {
                out.appendByte((byte) ',');
            }
            out.appendBytes(HOST);
            writeString(out, priority.host());
            out.appendBytes(SCORE);
            int score = priority.score();
            out.appendBytes(score >= 0 && score < SCORES.length ? SCORES[score] : ascii(Integer.toString(score)));
            out.appendByte((byte) '}');
        }
        return out.appendByte((byte) ']');
    }

    /** The body of a refused prioritize or preempt call: the error in the shape the other verbs use. */
    public Buffer error(String message) {
        var out = Buffer.buffer(64 + message.length());
        out.appendBytes(ERROR_ONLY);
        writeString(out, message);
        return out.appendByte((byte) '}');
    }

    private void writeStrings(Buffer out, List<String> values) {
        if (values == null) {
            out.appendBytes(NULL);
            return;
        }
        out.appendByte((byte) '[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.appendByte((byte) ',');
            }
            writeString(out, values.get(i));
        }
        out.appendByte((byte) ']');
    }

    private void writeMap(Buffer out, Map<String, String> map) {
        out.appendByte((byte) '{');
        boolean first = true;
        for (var entry : map.entrySet()) {
            if (!first) {
                out.appendByte((byte) ',');
            }
            first = false;
            writeString(out, entry.getKey());
            out.appendByte((byte) ':');
            writeString(out, entry.getValue());
        }
        out.appendByte((byte) '}');
    }

    private void writeString(Buffer out, String value) {
        if (value.length() > MAX_ENCODED_LENGTH) {
            out.appendBytes(quote(value));
            return;
        }
        var bytes = encoded.get(value);
        if (bytes == null) {
            if (encoded.size() >= MAX_ENCODED) {
                encoded.clear();
            }
            bytes = quote(value);
            encoded.put(value, bytes);
        }
        out.appendBytes(bytes);
    }

    private byte[] quote(String value) {
        var escaped = encoder.quoteAsUTF8(value);
        var quoted = new byte[escaped.length + 2];
        quoted[0] = '"';
        System.arraycopy(escaped, 0, quoted, 1, escaped.length);
        quoted[quoted.length - 1] = '"';
        return quoted;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
