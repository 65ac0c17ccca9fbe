package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.AlikeRefusal;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.NodeReasons;
import io.hetgpu.extender.wire.RequestedNames;
import io.hetgpu.extender.wire.RequestedPriorities;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.netty.buffer.Unpooled;
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
 * <p>The JSON is laid out by hand straight into an array of the answer's exact size. Its strings are node names and
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
        // Every string is looked up once, and the answer sized exactly: at 5,000 nodes it is ~200 KB, and
        // a guessed size was half again as much, all of it garbage once sent.
        var asked = result.nodeNames() instanceof RequestedNames bytes ? bytes : null;
        var names = asked == null ? encodeAll(result.nodeNames()) : null;
        var failedReasons = result.failedNodes() instanceof NodeReasons reasons && reasons.requested() != null ? reasons : null;
        var failed = failedReasons == null ? encodeAll(result.failedNodes()) : encodeReasons(failedReasons);
        var unresolvable = encodeAll(AlikeRefusal.grouped(result.failedAndUnresolvableNodes()));
        var error = encoded(result.error());
        int size = FILTER_START.length + NODE_NAMES.length + FAILED.length + UNRESOLVABLE.length + ERROR.length + error.length + 1
                + (asked == null ? arraySize(names, 1) : arraySize(asked)) + objectSize(failed, failedReasons) + arraySize(unresolvable, 2);
        if (result.nodes() == null) {
            size += NULL.length;
        } else {
            size += ITEMS_START.length + ITEMS_END.length + Math.max(0, result.nodes().size() - 1);
            for (var node : result.nodes()) {
                size += node.end() - node.start();
            }
        }
        var out = new Out(size);
        out.put(FILTER_START);
        if (result.nodes() == null) {
            out.put(NULL);
        } else {
            out.put(ITEMS_START);
            for (int i = 0; i < result.nodes().size(); i++) {
                var node = result.nodes().get(i);
                if (i > 0) {
                    out.put((byte) ',');
                }
                out.put(node.body(), node.start(), node.end() - node.start());
            }
            out.put(ITEMS_END);
        }
        out.put(NODE_NAMES);
        if (asked != null) {
            writeArray(out, asked);
        } else if (names == null) {
            out.put(NULL);
        } else {
            writeArray(out, names);
        }
        out.put(FAILED);
        writeObject(out, failed, failedReasons);
        out.put(UNRESOLVABLE);
        writeObject(out, unresolvable);
        out.put(ERROR);
        out.put(error);
        return out.put((byte) '}').buffer();
    }

    /** The strings as quoted JSON, or null for a null list. */
    private byte[][] encodeAll(List<String> values) {
        if (values == null) {
            return null;
        }
        var all = new byte[values.size()][];
        for (int i = 0; i < all.length; i++) {
            all[i] = encoded(values.get(i));
        }
        return all;
    }

    /** Key, value, key, value... as quoted JSON. */
    private byte[][] encodeAll(Map<String, String> map) {
        var all = new byte[map.size() * 2][];
        var next = new int[1];
        map.forEach((key, value) -> {
            all[next[0]++] = encoded(key);
            all[next[0]++] = encoded(value);
        });
        return all;
    }

    /**
     * Each entry's name and reason as quoted JSON, but a name the request sent as bytes left null: it is copied from them,
     * with no lookup of its JSON form (a cache miss per refused node, of thousands). Reasons are few and shared.
     */
    private byte[][] encodeReasons(NodeReasons reasons) {
        var all = new byte[reasons.size() * 2][];
        String lastReason = null;
        byte[] lastEncoded = null;
        for (int i = 0; i < reasons.size(); i++) {
            if (reasons.requestIndex(i) < 0) {
                all[2 * i] = encoded(reasons.name(i));
            }
            var reason = reasons.reason(i);
            if (reason != lastReason) {
                lastReason = reason;
                lastEncoded = encoded(reason);
            }
            all[2 * i + 1] = lastEncoded;
        }
        return all;
    }

    /** Bytes of a JSON object of these keys and values, a null key being {@code from}'s requested name. */
    private static int objectSize(byte[][] keysAndValues, NodeReasons from) {
        if (from == null) {
            return arraySize(keysAndValues, 2);
        }
        int items = keysAndValues.length / 2;
        int size = 2 + Math.max(0, items - 1) + items;
        for (int i = 0; i < keysAndValues.length; i++) {
            if (keysAndValues[i] != null) {
                size += keysAndValues[i].length;
            } else {
                int at = from.requestIndex(i / 2);
                size += from.requested().end(at) - from.requested().start(at) + 2;
            }
        }
        return size;
    }

    /**
     * Bytes of a JSON array of the strings ({@code perItem} 1) or an object of them as keys and values (2):
     * brackets, commas and colons included.
     */
    private static int arraySize(byte[][] strings, int perItem) {
        if (strings == null) {
            return NULL.length;
        }
        int items = strings.length / perItem;
        int size = 2 + Math.max(0, items - 1) + items * (perItem - 1);
        for (var string : strings) {
            size += string.length;
        }
        return size;
    }

    /** Bytes of a JSON array of the names as the request had them: each between its quotes, commas, brackets. */
    private static int arraySize(RequestedNames names) {
        int size = 2 + Math.max(0, names.size() - 1);
        for (int i = 0; i < names.size(); i++) {
            size += names.end(i) - names.start(i) + 2;
        }
        return size;
    }

    /** The names copied from the request: kube-scheduler wrote them as JSON strings, so they are JSON strings. */
    private static void writeArray(Out out, RequestedNames names) {
        out.put((byte) '[');
        for (int i = 0; i < names.size(); i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            out.put((byte) '"').put(names.body(), names.start(i), names.end(i) - names.start(i)).put((byte) '"');
        }
        out.put((byte) ']');
    }

    private static void writeArray(Out out, byte[][] strings) {
        out.put((byte) '[');
        for (int i = 0; i < strings.length; i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            out.put(strings[i]);
        }
        out.put((byte) ']');
    }

    private static void writeObject(Out out, byte[][] keysAndValues) {
        writeObject(out, keysAndValues, null);
    }

    /** A null key is {@code from}'s requested name, copied as the request had it (a JSON string's content). */
    private static void writeObject(Out out, byte[][] keysAndValues, NodeReasons from) {
        out.put((byte) '{');
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (i > 0) {
                out.put((byte) ',');
            }
            if (keysAndValues[i] != null) {
                out.put(keysAndValues[i]);
            } else {
                var names = from.requested();
                int at = from.requestIndex(i / 2);
                out.put((byte) '"').put(names.body(), names.start(at), names.end(at) - names.start(at)).put((byte) '"');
            }
            out.put((byte) ':').put(keysAndValues[i + 1]);
        }
        out.put((byte) '}');
    }

    public Buffer hostPriorities(List<HostPriority> priorities) {
        if (priorities instanceof RequestedPriorities asked) {
            return hostPriorities(asked);
        }
        var hosts = new byte[priorities.size()][];
        var scores = new byte[priorities.size()][];
        int size = 2 + Math.max(0, priorities.size() - 1);
        for (int i = 0; i < hosts.length; i++) {
            var priority = priorities.get(i);
            int score = priority.score();
            hosts[i] = encoded(priority.host());
            scores[i] = score >= 0 && score < SCORES.length ? SCORES[score] : ascii(Integer.toString(score));
            size += HOST.length + hosts[i].length + SCORE.length + scores[i].length + 1;
        }
        var out = new Out(size);
        out.put((byte) '[');
        for (int i = 0; i < hosts.length; i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            out.put(HOST).put(hosts[i]).put(SCORE).put(scores[i]).put((byte) '}');
        }
        return out.put((byte) ']').buffer();
    }

    /** The hosts a request named as bytes, copied from it; the few it did not, looked up as strings. */
    private Buffer hostPriorities(RequestedPriorities priorities) {
        var names = priorities.asked();
        int size = 2 + Math.max(0, priorities.size() - 1);
        var held = new byte[priorities.size()][];
        for (int i = 0; i < priorities.size(); i++) {
            int at = priorities.askedIndex(i);
            int host;
            if (at >= 0) {
                host = names.end(at) - names.start(at) + 2;
            } else {
                held[i] = encoded(priorities.host(i));
                host = held[i].length;
            }
            size += HOST.length + host + SCORE.length + score(priorities.score(i)).length + 1;
        }
        var out = new Out(size);
        out.put((byte) '[');
        for (int i = 0; i < priorities.size(); i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            out.put(HOST);
            int at = priorities.askedIndex(i);
            if (at >= 0) {
                out.put((byte) '"').put(names.body(), names.start(at), names.end(at) - names.start(at)).put((byte) '"');
            } else {
                out.put(held[i]);
            }
            out.put(SCORE).put(score(priorities.score(i))).put((byte) '}');
        }
        return out.put((byte) ']').buffer();
    }

    private static byte[] score(int score) {
        return score >= 0 && score < SCORES.length ? SCORES[score] : ascii(Integer.toString(score));
    }

    /** The body of a refused prioritize or preempt call: the error in the shape the other verbs use. */
    public Buffer error(String message) {
        var quoted = encoded(message);
        var out = new Out(ERROR_ONLY.length + quoted.length + 1);
        return out.put(ERROR_ONLY).put(quoted).put((byte) '}').buffer();
    }

    /** The string as a quoted, escaped JSON string in UTF-8, kept for next time unless it is long. */
    private byte[] encoded(String value) {
        if (value.length() > MAX_ENCODED_LENGTH) {
            return quote(value);
        }
        var bytes = encoded.get(value);
        if (bytes == null) {
            if (encoded.size() >= MAX_ENCODED) {
                encoded.clear();
            }
            bytes = quote(value);
            encoded.put(value, bytes);
        }
        return bytes;
    }

    /**
     * The answer's bytes, written into an array of the size computed beforehand: plain array copies, where
     * a growing Netty buffer checks its bounds and reference count on every one of ~25,000 appends.
     */
    private static final class Out {
        private final byte[] bytes;
        private int at;

        Out(int size) {
            bytes = new byte[size];
        }

        Out put(byte[] part) {
            System.arraycopy(part, 0, bytes, at, part.length);
            at += part.length;
            return this;
        }

        Out put(byte[] from, int offset, int length) {
            System.arraycopy(from, offset, bytes, at, length);
            at += length;
            return this;
        }

        Out put(byte b) {
            bytes[at++] = b;
            return this;
        }

        Buffer buffer() {
            if (at != bytes.length) {
                throw new IllegalStateException("answer sized " + bytes.length + " bytes, written " + at);
            }
            return Buffer.buffer(Unpooled.wrappedBuffer(bytes));
        }
    }

    private byte[] quote(String value) {
        byte[] escaped;
        try {
            escaped = encoder.quoteAsUTF8(value);
        } catch (IllegalArgumentException e) {
            // A lone surrogate (a node name, or an annotation a reason quotes) has no UTF-8 form.
            escaped = encoder.quoteAsUTF8(wellFormed(value));
        }
        var quoted = new byte[escaped.length + 2];
        quoted[0] = '"';
        System.arraycopy(escaped, 0, quoted, 1, escaped.length);
        quoted[quoted.length - 1] = '"';
        return quoted;
    }

    /** The text with each lone surrogate replaced by U+FFFD, as Go's encoding/json writes invalid text. */
    static String wellFormed(String text) {
        var out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else {
                out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
