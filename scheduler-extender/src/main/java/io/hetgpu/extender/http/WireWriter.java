package io.hetgpu.extender.http;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * Writes extender answers with the capitalised keys of the Go structs (which carry no JSON tags).
 * Nodes that fit are copied from the request body as they came.
 */
public final class WireWriter {

    private final JsonFactory factory = new JsonFactory();

    public byte[] filterResult(FilterResult result) {
        int estimate = 256;
        if (result.nodes() != null) {
            for (var node : result.nodes()) {
                estimate += node.end() - node.start() + 1;
            }
        }
        var out = new ByteArrayOutputStream(estimate);
        try (var json = factory.createGenerator(out, JsonEncoding.UTF8)) {
            // Structure by hand, values through the generator: nodes that fit are copied from the
            // request as they came, with no decode and re-encode of megabytes of node status.
            json.setRootValueSeparator(null);
            out.write(ascii("{\"Nodes\":"));
            if (result.nodes() == null) {
                out.write(ascii("null"));
            } else {
                out.write(ascii("{\"metadata\":{},\"items\":["));
                for (int i = 0; i < result.nodes().size(); i++) {
                    var node = result.nodes().get(i);
                    if (i > 0) {
                        out.write(',');
                    }
                    out.write(node.body(), node.start(), node.end() - node.start());
                }
                out.write(ascii("]}"));
            }
            out.write(ascii(",\"NodeNames\":"));
            writeStrings(json, result.nodeNames());
            json.flush();
            out.write(ascii(",\"FailedNodes\":"));
            writeMap(json, result.failedNodes());
            json.flush();
            out.write(ascii(",\"FailedAndUnresolvableNodes\":"));
            writeMap(json, result.failedAndUnresolvableNodes());
            json.flush();
            out.write(ascii(",\"Error\":"));
            json.writeString(result.error());
            json.flush();
            out.write('}');
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }

    private static byte[] ascii(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    public byte[] hostPriorities(List<HostPriority> priorities) {
        var out = new ByteArrayOutputStream(32 + priorities.size() * 40);
        try (var json = factory.createGenerator(out, JsonEncoding.UTF8)) {
            json.writeStartArray();
            for (var priority : priorities) {
                json.writeStartObject();
                json.writeStringField("Host", priority.host());
                json.writeNumberField("Score", priority.score());
                json.writeEndObject();
            }
            json.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }

    /** The body of a refused prioritize or preempt call: the error in the shape the other verbs use. */
    public byte[] error(String message) {
        var out = new ByteArrayOutputStream(64 + message.length());
        try (var json = factory.createGenerator(out, JsonEncoding.UTF8)) {
            json.writeStartObject();
            json.writeStringField("Error", message);
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }

    private static void writeStrings(JsonGenerator json, List<String> values) throws IOException {
        if (values == null) {
            json.writeNull();
            return;
        }
        json.writeStartArray();
        for (var value : values) {
            json.writeString(value);
        }
        json.writeEndArray();
    }

    private static void writeMap(JsonGenerator json, Map<String, String> map) throws IOException {
        json.writeStartObject();
        for (var entry : map.entrySet()) {
            json.writeStringField(entry.getKey(), entry.getValue());
        }
        json.writeEndObject();
    }
}
