package io.hetgpu.testcluster.scheduler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the test cluster's scheduler takes from a {@code KubeSchedulerConfiguration}: the profile's
 * scheduler name, {@code percentageOfNodesToScore} and the extenders. The test cluster reads the very
 * one in {@code manifests/} that a real cluster runs (see {@code DeployedConfiguration}).
 */
public record SchedulerSettings(String schedulerName, int percentageOfNodesToScore, List<ExtenderSettings> extenders) {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    public SchedulerSettings {
        extenders = List.copyOf(extenders);
    }

    /** kube-scheduler's own behaviour without any extender: the baseline hetgpu is compared against. */
    public SchedulerSettings withoutExtenders() {
        return new SchedulerSettings(schedulerName, percentageOfNodesToScore, List.of());
    }

    public SchedulerSettings withExtenders(List<ExtenderSettings> replaced) {
        return new SchedulerSettings(schedulerName, percentageOfNodesToScore, replaced);
    }

    /** Parses a KubeSchedulerConfiguration document; errors name the field. */
    public static SchedulerSettings parse(String yaml) {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (IOException e) {
            throw new IllegalArgumentException("KubeSchedulerConfiguration is not YAML: " + e.getMessage());
        }
        if (root == null || !"KubeSchedulerConfiguration".equals(root.path("kind").asText())) {
            throw new IllegalArgumentException("kind: expected KubeSchedulerConfiguration, got \"" + (root == null ? "" : root.path("kind").asText()) + "\"");
        }
        var profiles = root.path("profiles");
        var schedulerName = profiles.isArray() && !profiles.isEmpty()
                ? profiles.get(0).path("schedulerName").asText("default-scheduler") : "default-scheduler";
        int percentage = root.path("percentageOfNodesToScore").asInt(0);
        var extenders = new ArrayList<ExtenderSettings>();
        var entries = root.path("extenders");
        for (int i = 0; i < entries.size(); i++) {
            extenders.add(extender(entries.get(i), "extenders[" + i + "]"));
        }
        return new SchedulerSettings(schedulerName, percentage, extenders);
    }

    private static ExtenderSettings extender(JsonNode entry, String path) {
        var url = entry.path("urlPrefix").asText("");
        if (url.isEmpty()) {
            throw new IllegalArgumentException(path + ".urlPrefix: missing");
        }
        var timeoutText = entry.path("httpTimeout").asText("5s");
        Duration timeout;
        try {
            timeout = parseGoDuration(timeoutText);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(path + ".httpTimeout: expected a duration such as 5s, got \"" + timeoutText + "\"");
        }
        var managed = new ArrayList<String>();
        for (var resource : entry.path("managedResources")) {
            managed.add(resource.path("name").asText());
        }
        return new ExtenderSettings(url, entry.path("filterVerb").asText(""), entry.path("prioritizeVerb").asText(""),
                entry.path("preemptVerb").asText(""), entry.path("weight").asLong(1), entry.path("nodeCacheCapable").asBoolean(false),
                entry.path("ignorable").asBoolean(false), timeout, managed, entry.path("bindVerb").asText(""));
    }

    /** Go's duration strings as Kubernetes writes them: 5s, 500ms, 1m30s. */
    static Duration parseGoDuration(String text) {
        var matcher = java.util.regex.Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)").matcher(text);
        Duration total = Duration.ZERO;
        int end = 0;
        while (matcher.find()) {
            if (matcher.start() != end) {
                break;
            }
            double amount = Double.parseDouble(matcher.group(1));
            long millis = (long) switch (matcher.group(2)) {
                case "ms" -> amount;
                case "s" -> amount * 1_000;
                case "m" -> amount * 60_000;
                default -> amount * 3_600_000;
            };
            total = total.plusMillis(millis);
            end = matcher.end();
        }
        if (end == 0 || end != text.length()) {
            throw new IllegalArgumentException("not a Go duration: " + text);
        }
        return total;
    }
}
