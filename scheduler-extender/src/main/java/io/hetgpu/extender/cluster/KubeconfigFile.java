package io.hetgpu.extender.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.client.Config;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.cli.ParseErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;

/**
 * A kubeconfig file as kubectl reads it: files it names ({@code certificate-authority}, {@code client-certificate})
 * relative to the kubeconfig's own folder, and what it cannot read said in one line that names the field and the
 * value ({@code clusters: expected a list, got 5}) instead of the deserializer's account of its own types.
 */
public final class KubeconfigFile {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** A kubeconfig that cannot be read, or not as a kubeconfig: the message names the file. */
    public static final class Unreadable extends Exception {
        Unreadable(String message) {
            super(message);
        }
    }

    private KubeconfigFile() {
    }

    /** @param context the context to use, or null for the file's current one */
    public static Config read(Path file, String context) throws Unreadable {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new Unreadable(file + ": cannot be read (no such file)");
        } catch (IOException e) {
            throw new Unreadable(file + ": cannot be read (" + (e.getMessage() == null ? e : e.getMessage()) + ")");
        }
        JsonNode tree;
        try {
            tree = YAML.readTree(text);
        } catch (JsonProcessingException e) {
            throw new Unreadable(file + ": " + ParseErrors.at(e) + "not YAML: " + ParseErrors.sentences(e));
        }
        if (tree == null || !tree.isObject()) {
            throw new Unreadable(file + ": expected a kubeconfig, a mapping with clusters, contexts and users, got "
                    + (tree == null ? "nothing" : shown(tree)));
        }
        if (context != null) {
            // fabric8 falls back to the current context when the named one is missing; kubectl refuses, and so does this.
            var names = new ArrayList<String>();
            tree.path("contexts").forEach(one -> names.add(one.path("name").asText()));
            if (!names.contains(context)) {
                throw new Unreadable(file + ": no context " + Quote.of(context) + " (its contexts: "
                        + (names.isEmpty() ? "none" : Quote.cut(String.join(", ", names), 200)) + ")");
            }
        }
        try {
            return Config.fromKubeconfig(context, text, file.toAbsolutePath().toString());
        } catch (RuntimeException e) {
            throw new Unreadable(file + ": " + problem(e, tree));
        }
    }

    /** The field and the value where the file's shape is wrong; otherwise the first line of what fabric8 said. */
    private static String problem(RuntimeException e, JsonNode tree) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()) {
                var path = new StringBuilder();
                var value = tree;
                for (var step : mapping.getPath()) {
                    if (step.getFieldName() != null) {
                        path.append(path.isEmpty() ? "" : ".").append(step.getFieldName());
                        value = value.path(step.getFieldName());
                    } else if (step.getIndex() >= 0) {
                        path.append('[').append(step.getIndex()).append(']');
                        value = value.path(step.getIndex());
                    }
                }
                var expected = mapping instanceof MismatchedInputException mismatch
                        && mismatch.getTargetType() != null ? "expected " + kind(mismatch.getTargetType()) + ", got " : "cannot be read: ";
                return path + ": " + expected + shown(value);
            }
        }
        var message = e.getMessage() == null ? e.toString() : e.getMessage();
        return "not a kubeconfig (" + message.lines().findFirst().orElse("") + ")";
    }

    /** A value of the file as a message quotes it: a scalar as written, anything else as JSON, a missing one as nothing. */
    private static String shown(JsonNode value) {
        return value.isMissingNode() ? "nothing" : Quote.of(value.isValueNode() ? value.asText() : value.toString());
    }

    private static String kind(Class<?> type) {
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "a list";
        }
        if (type == String.class) {
            return "a string";
        }
        if (Number.class.isAssignableFrom(type) || type.isPrimitive() && type != boolean.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        return Map.class.isAssignableFrom(type) || !type.getName().startsWith("java.") ? "a mapping" : type.getSimpleName();
    }
}
