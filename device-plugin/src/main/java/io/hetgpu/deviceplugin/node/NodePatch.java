package io.hetgpu.deviceplugin.node;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The smallest JSON merge patch (RFC 7386) that gives a Node the plugin's labels and annotations: only
 * keys whose value differs are sent, and a label is removed (set to null) only when the plugin owns it.
 * Labels and annotations of anyone else are never mentioned, so they cannot be lost.
 *
 * @param labels      label changes; a null value removes the label
 * @param annotations annotation changes
 */
public record NodePatch(Map<String, String> labels, Map<String, String> annotations) {

    public NodePatch {
        labels = new TreeMap<>(labels); // TreeMap: keeps the null values of removals
        annotations = new TreeMap<>(annotations);
    }

    public static NodePatch between(NodeMetadata current, NodeMetadata desired, Collection<String> ownedLabels) {
        var labels = changes(current.labels(), desired.labels());
        for (var key : ownedLabels) {
            if (current.labels().containsKey(key) && !desired.labels().containsKey(key)) {
                labels.put(key, null);
            }
        }
        return new NodePatch(labels, changes(current.annotations(), desired.annotations()));
    }

    private static Map<String, String> changes(Map<String, String> current, Map<String, String> desired) {
        var changes = new TreeMap<String, String>();
        desired.forEach((key, value) -> {
            if (!Objects.equals(current.get(key), value)) {
                changes.put(key, value);
            }
        });
        return changes;
    }

    public boolean isEmpty() {
        return labels.isEmpty() && annotations.isEmpty();
    }

    /** The patch body: {@code {"metadata":{"labels":{...},"annotations":{...}}}}, empty sections left out. */
    public Map<String, Object> body() {
        var metadata = new LinkedHashMap<String, Object>();
        if (!labels.isEmpty()) {
            metadata.put("labels", labels);
        }
        if (!annotations.isEmpty()) {
            metadata.put("annotations", annotations);
        }
        return Map.of("metadata", metadata);
    }
}
