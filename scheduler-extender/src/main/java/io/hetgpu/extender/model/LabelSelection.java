package io.hetgpu.extender.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A label selector as the API server's {@code metav1.LabelSelector}: every {@code matchLabels} pair and every expression
 * must hold. Read from objects a namespace's users write (a PodDisruptionBudget's selector), so a selector that cannot be
 * read is {@link #INVALID} and matches nothing, as kube-scheduler skips a budget whose selector does not convert.
 *
 * @param matchLabels label = value pairs
 * @param expressions {@code In}, {@code NotIn}, {@code Exists}, {@code DoesNotExist} requirements
 */
public record LabelSelection(Map<String, String> matchLabels, List<Requirement> expressions) {

    /** A selector that could not be read: it selects nothing. */
    public static final LabelSelection INVALID = new LabelSelection(Map.of(), List.of());

    public LabelSelection {
        matchLabels = Map.copyOf(matchLabels);
        expressions = List.copyOf(expressions);
    }

    /** One {@code matchExpressions} entry; {@code values} is empty for Exists and DoesNotExist. */
    public record Requirement(String key, Operator operator, Set<String> values) {
        public Requirement {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(operator, "operator");
            values = Set.copyOf(values);
        }

        boolean holdsFor(Map<String, String> labels) {
            var value = labels.get(key);
            return switch (operator) {
                case IN -> value != null && values.contains(value);
                case NOT_IN -> value == null || !values.contains(value);
                case EXISTS -> value != null;
                case DOES_NOT_EXIST -> value == null;
            };
        }
    }

    public enum Operator {
        IN, NOT_IN, EXISTS, DOES_NOT_EXIST;

        /** The operator of its API name, or null for any other text. */
        public static Operator named(String name) {
            return switch (name == null ? "" : name) {
                case "In" -> IN;
                case "NotIn" -> NOT_IN;
                case "Exists" -> EXISTS;
                case "DoesNotExist" -> DOES_NOT_EXIST;
                default -> null;
            };
        }
    }

    /** No pair and no expression: what kube-scheduler's preemption takes to select no pod at all. */
    public boolean isEmpty() {
        return matchLabels.isEmpty() && expressions.isEmpty();
    }

    /** Whether a pod with these labels is selected; an empty selector selects none. */
    public boolean matches(Map<String, String> labels) {
        if (isEmpty()) {
            return false;
        }
        for (var pair : matchLabels.entrySet()) {
            if (!pair.getValue().equals(labels.get(pair.getKey()))) {
                return false;
            }
        }
        for (var requirement : expressions) {
            if (!requirement.holdsFor(labels)) {
                return false;
            }
        }
        return true;
    }
}
