package io.hetgpu.gpu.profile;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Typed, path-aware reading of one object of a profile, so that every rejection names the file, the
 * exact field ({@code devices[3].memoryMiB}) and quotes what was found there. Unknown fields are
 * rejected too: a misspelt key in a hand-written profile must not be silently ignored.
 *
 * @param source the file the tree came from, as the admin named it
 * @param path   where this object sits in the tree; empty at the root
 */
record ProfileFields(JsonNode node, String source, String path) {

    static ProfileFields root(JsonNode node, String source) throws ProfileFormatException {
        if (node == null || !node.isObject()) {
            throw new ProfileFormatException(source + ": expected a mapping of fields (name, devices, links, ...), got "
                    + describe(node));
        }
        return new ProfileFields(node, source, "");
    }

    /** Rejects any field not in {@code known}. */
    void allowOnly(Set<String> known) throws ProfileFormatException {
        for (var property : node.properties()) {
            var name = property.getKey();
            if (!known.contains(name)) {
                throw failure(name, "unknown field (expected one of " + String.join(", ", known.stream().sorted().toList()) + ")");
            }
        }
    }

    boolean has(String field) {
        var value = node.get(field);
        return value != null && !value.isNull();
    }

    JsonNode required(String field) throws ProfileFormatException {
        if (!has(field)) {
            throw failure(field, "missing");
        }
        return node.get(field);
    }

    String text(String field) throws ProfileFormatException {
        var value = required(field);
        if (!value.isTextual() || value.asText().isBlank()) {
            throw failure(field, "expected a non-empty string, got " + describe(value));
        }
        return value.asText().strip();
    }

    /**
     * A version-like value: YAML reads an unquoted {@code 12.2} or {@code 7.0} as a number, which is
     * accepted as its decimal text so that admins need not remember to quote it.
     */
    String textOrNumber(String field) throws ProfileFormatException {
        var value = required(field);
        if (value.isNumber()) {
            return value.asText();
        }
        return text(field);
    }

    long integer(String field, long min, long max) throws ProfileFormatException {
        var value = required(field);
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
            throw failure(field, "expected an integer " + range(min, max) + ", got " + describe(value));
        }
        return value.asLong();
    }

    ProfileFields object(String field) throws ProfileFormatException {
        var value = required(field);
        if (!value.isObject()) {
            throw failure(field, "expected a mapping, got " + describe(value));
        }
        return new ProfileFields(value, source, at(field));
    }

    /** The elements of a list field, each with its own path ({@code devices[3]}). */
    List<Element> list(String field) throws ProfileFormatException {
        var value = required(field);
        if (!value.isArray()) {
            throw failure(field, "expected a list, got " + describe(value));
        }
        var items = new ArrayList<Element>();
        for (int i = 0; i < value.size(); i++) {
            items.add(new Element(value.get(i), source, at(field) + "[" + i + "]"));
        }
        return items;
    }

    ProfileFormatException failure(String field, String problem) {
        return new ProfileFormatException(source + ": " + at(field) + ": " + problem);
    }

    ProfileFormatException failure(String problem) {
        return new ProfileFormatException(source + ": " + (path.isEmpty() ? "" : path + ": ") + problem);
    }

    private String at(String field) {
        return path.isEmpty() ? field : path + "." + field;
    }

    /** One element of a list: an object, an integer or a string, depending on the list. */
    record Element(JsonNode node, String source, String path) {

        ProfileFields object() throws ProfileFormatException {
            if (!node.isObject()) {
                throw failure("expected a mapping, got " + describe(node));
            }
            return new ProfileFields(node, source, path);
        }

        int integer(int min, int max) throws ProfileFormatException {
            if (!node.isIntegralNumber() || !node.canConvertToInt() || node.asInt() < min || node.asInt() > max) {
                throw failure("expected an integer " + range(min, max) + ", got " + describe(node));
            }
            return node.asInt();
        }

        ProfileFormatException failure(String problem) {
            return new ProfileFormatException(source + ": " + path + ": " + problem);
        }
    }

    private static String range(long min, long max) {
        return max == Long.MAX_VALUE ? ">= " + min : "from " + min + " to " + max;
    }

    static String describe(JsonNode value) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return "nothing";
        }
        var text = value.toString();
        return text.length() > 80 ? text.substring(0, 77) + "..." : text;
    }
}
