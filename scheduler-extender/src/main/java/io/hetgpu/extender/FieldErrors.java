package io.hetgpu.extender;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import com.fasterxml.jackson.databind.deser.ValueInstantiator;
import com.fasterxml.jackson.databind.deser.std.NumberDeserializers;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import io.hetgpu.gpu.Quote;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Every bad field of a configuration file, each with its path and value, so that one start reports them all
 * (as kube-scheduler's {@code field.ErrorList} does for plugin args) instead of one per attempt.
 */
final class FieldErrors {

    private final List<String> errors = new ArrayList<>();

    void add(String path, Object value, String detail) {
        errors.add(path + ": " + detail + ", got " + show(value));
    }

    /** A problem already worded with what was expected and what was found (a shared rule's message). */
    void add(String path, String problem) {
        errors.add(path + ": " + problem);
    }

    void check(boolean valid, String path, Object value, String detail) {
        if (!valid) {
            add(path, value, detail);
        }
    }

    /**
     * A domain value built from the file's fields; its own check's message (which names its field) is kept
     * after {@code prefix}, and {@code fallback} stands in so that the other fields are still checked.
     */
    <T> T attempt(String prefix, Supplier<T> build, T fallback) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            errors.add(prefix + e.getMessage());
            return fallback;
        }
    }

    /** Whether {@code path} already has an error (the reader's, whose value then arrives as null). */
    boolean reported(String path) {
        return errors.stream().anyMatch(error -> error.startsWith(path + ": "));
    }

    boolean isEmpty() {
        return errors.isEmpty();
    }

    void throwIfAny(String source) throws ExtenderConfig.ConfigException {
        if (errors.size() == 1) {
            throw new ExtenderConfig.ConfigException(source + ": " + errors.getFirst());
        }
        if (!errors.isEmpty()) {
            throw new ExtenderConfig.ConfigException(source + ": " + errors.size() + " invalid fields: " + String.join("; ", errors));
        }
    }

    /** Jackson's reading problems (unknown keys, wrong types) recorded here instead of ending the reading. */
    DeserializationProblemHandler collector() {
        return new DeserializationProblemHandler() {
            @Override
            public boolean handleUnknownProperty(DeserializationContext context, JsonParser parser, JsonDeserializer<?> deserializer,
                                                 Object bean, String name) throws IOException {
                var known = new TreeSet<String>();
                deserializer.getKnownPropertyNames().forEach(field -> known.add(String.valueOf(field)));
                errors.add(path(parser.getParsingContext()) + ": unknown field (known: " + String.join(", ", known) + ")");
                parser.skipChildren();
                return true;
            }

            @Override
            public Object handleWeirdStringValue(DeserializationContext context, Class<?> type, String value, String message) {
                add(path(context.getParser().getParsingContext()), value, expected(type, message));
                return null;
            }

            @Override
            public Object handleWeirdNumberValue(DeserializationContext context, Class<?> type, Number value, String message) {
                add(path(context.getParser().getParsingContext()), value, expected(type, message));
                return null;
            }

            /** A scalar where a list or mapping is expected ({@code schedulerNames: hetgpu}) names its field like any other. */
            @Override
            public Object handleMissingInstantiator(DeserializationContext context, Class<?> type, ValueInstantiator instantiator,
                                                    JsonParser parser, String message) throws IOException {
                errors.add(path(parser.getParsingContext()) + ": expected " + describe(type) + ", got " + shape(parser.currentToken()));
                parser.skipChildren();
                return null;
            }

            @Override
            public Object handleUnexpectedToken(DeserializationContext context, JavaType type, JsonToken token, JsonParser parser,
                                                String message) throws IOException {
                var where = path(parser.getParsingContext());
                errors.add(where + ": expected " + describe(type.getRawClass()) + ", got " + shape(token));
                parser.skipChildren();
                return null;
            }
        };
    }

    private static String path(JsonStreamContext context) {
        var parts = new ArrayList<String>();
        for (var at = context; at != null && !at.inRoot(); at = at.getParent()) {
            if (at.inArray()) {
                // An array just opened (the unexpected token itself) has no element yet.
                if (at.hasCurrentIndex()) {
                    parts.addFirst("[" + at.getCurrentIndex() + "]");
                }
            } else if (at.getCurrentName() != null) {
                parts.addFirst(at.getCurrentName());
            }
        }
        var text = new StringBuilder();
        for (var part : parts) {
            text.append(text.isEmpty() || part.startsWith("[") ? "" : ".").append(part);
        }
        return text.isEmpty() ? "(top level)" : text.toString();
    }

    private static String shape(JsonToken token) {
        return switch (token) {
            case START_OBJECT -> "a mapping";
            case START_ARRAY -> "a list";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "true or false";
            default -> token.asString() == null ? token.name() : token.asString();
        };
    }

    /** What a field of {@code type} expects, with its bound when the value was out of its range. */
    private static String expected(Class<?> type, String message) {
        return "expected " + describe(type)
                + ("out of range".equals(message) ? " of at most " + (type == Integer.class ? Integer.MAX_VALUE : Long.MAX_VALUE) : "");
    }

    private static String show(Object value) {
        return value instanceof String text ? Quote.of(text) : Quote.cut(value);
    }

    /**
     * "policy.weights.tier: given twice" for the reader's duplicate-key error (which names the key, not its path),
     * or empty for another reading error.
     */
    static Optional<String> duplicateKey(JsonParseException e) {
        var message = e.getOriginalMessage();
        if (message == null || !message.startsWith("Duplicate field '")) {
            return Optional.empty();
        }
        // The reader has taken the key as the current name when it finds it given before: the context is its path.
        var key = message.substring("Duplicate field '".length(), message.lastIndexOf('\''));
        var where = e.getProcessor() instanceof JsonParser parser ? path(parser.getParsingContext()) : key;
        return Optional.of(where + ": given twice (each key once per mapping)");
    }

    /**
     * Integer and long fields that refuse a fraction instead of truncating it (Jackson's default), through this
     * collector, so that "port: expected an integer, got 18103.9" is reported beside every other bad field.
     */
    static SimpleModule wholeNumbers() {
        var module = new SimpleModule("whole-numbers");
        module.addDeserializer(Integer.class, new WholeNumber<>(Integer.class, new NumberDeserializers.IntegerDeserializer(Integer.class, null)));
        module.addDeserializer(Long.class, new WholeNumber<>(Long.class, new NumberDeserializers.LongDeserializer(Long.class, null)));
        return module;
    }

    private static final class WholeNumber<T> extends StdDeserializer<T> {
        private final JsonDeserializer<T> standard;

        WholeNumber(Class<T> type, JsonDeserializer<T> standard) {
            super(type);
            this.standard = standard;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T deserialize(JsonParser parser, DeserializationContext context) throws IOException {
            var token = parser.currentToken();
            boolean fraction = token == JsonToken.VALUE_NUMBER_FLOAT;
            boolean tooLarge = token == JsonToken.VALUE_NUMBER_INT && (handledType() == Integer.class
                    ? parser.getNumberType() != JsonParser.NumberType.INT
                    : parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER);
            if (fraction || tooLarge) {
                return (T) context.handleWeirdNumberValue(handledType(), parser.getNumberValue(),
                        fraction ? "not a whole number" : "out of range");
            }
            return standard.deserialize(parser, context);
        }
    }

    static String describe(Class<?> type) {
        if (type == null) {
            return "a different value";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (type == Double.class || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord()) {
            return "a mapping";
        }
        return "a " + type.getSimpleName();
    }
}
