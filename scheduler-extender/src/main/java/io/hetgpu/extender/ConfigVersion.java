package io.hetgpu.extender;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The versions of the configuration file this extender reads. A file without {@code version} is the
 * unversioned form of hetgpu 0.1 (policy settings at the top level); it is refused with the way to write
 * it now, rather than read with a guess.
 */
final class ConfigVersion {

    static final String CURRENT = "v1";
    static final List<String> SUPPORTED = List.of(CURRENT);
    private static final List<String> POLICY_KEYS = List.of("priority", "weights", "tiers", "workloads", "minimumSpeedShare", "highPriorityReserve");

    private ConfigVersion() {
    }

    static void check(JsonNode file, String source) throws ExtenderConfig.ConfigException {
        var version = file.get("version");
        if (version == null || version.isNull()) {
            var moved = POLICY_KEYS.stream().filter(file::has).toList();
            throw new ExtenderConfig.ConfigException(source + ": version: missing. Write \"version: " + CURRENT + "\" as the first line"
                    + " and put the policy settings (" + String.join(", ", POLICY_KEYS) + ") under \"policy:\""
                    + (moved.isEmpty() ? "" : "; this file has " + String.join(", ", moved) + " at the top level")
                    + "; port, resourceName, rackLabel, bodyLimitBytes and events stay where they are");
        }
        if (!SUPPORTED.contains(version.asText())) {
            throw new ExtenderConfig.ConfigException(source + ": version: expected one of " + String.join(", ", SUPPORTED)
                    + ", got \"" + version.asText() + "\"");
        }
    }
}
