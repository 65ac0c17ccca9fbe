package io.hetgpu.gpu.tier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.cli.ParseErrors;
import java.util.ArrayList;
import java.util.List;

/**
 * An admin's card-table overrides: the {@code policy.tiers} list of the extender's configuration file
 * (version v1, YAML or JSON), other keys ignored, so the device plugin (for its {@code gpu.tier} label) and
 * the scheduler extender (for its scores) read the very same ConfigMap file:
 *
 * <pre>{@code
 * version: v1
 * policy:
 *   tiers:
 *     - {model: L40S, rank: 65, computeCapability: "8.9", maxMemoryMiB: 46068}
 * }</pre>
 *
 * A top-level {@code tiers:} without a version is the unversioned form, refused with how to write it now.
 */
public final class TierTableFile {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private TierTableFile() {
    }

    /** The entries, in file order; errors name {@code source}, the field and the value. */
    public static List<KnownCard> read(String text, String source) {
        JsonNode root;
        try {
            root = text.isBlank() ? null : YAML.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(source + ": " + ParseErrors.at(e) + "not YAML or JSON: " + ParseErrors.sentences(e));
        }
        if (root == null || !root.isObject()) {
            return List.of();
        }
        if (!root.has("version") && root.has("tiers")) {
            throw new IllegalArgumentException(source + ": tiers: at the top level is the unversioned form; write \"version: v1\""
                    + " as the first line and put tiers under \"policy:\"");
        }
        var tiers = root.path("policy").get("tiers");
        if (tiers == null || tiers.isNull()) {
            return List.of();
        }
        if (!tiers.isArray()) {
            throw new IllegalArgumentException(source + ": policy.tiers: expected a list, got " + tiers);
        }
        var cards = new ArrayList<KnownCard>();
        for (int i = 0; i < tiers.size(); i++) {
            var path = source + ": policy.tiers[" + i + "]";
            var entry = tiers.get(i);
            var model = entry.path("model").asText("");
            if (model.isBlank()) {
                throw new IllegalArgumentException(path + ".model: missing");
            }
            int rank = positive(entry, "rank", path);
            var cc = entry.path("computeCapability").asText("");
            ComputeCapability capability;
            try {
                capability = ComputeCapability.parse(cc);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(path + ".computeCapability: expected MAJOR.MINOR such as \"9.0\", got \"" + cc + "\"");
            }
            cards.add(new KnownCard(model.strip(), rank, capability, positive(entry, "maxMemoryMiB", path)));
        }
        return List.copyOf(cards);
    }

    private static int positive(JsonNode entry, String field, String path) {
        var value = entry.get(field);
        if (value == null || !value.canConvertToInt() || !value.isIntegralNumber() || value.asInt() < 1) {
            throw new IllegalArgumentException(path + "." + field + ": expected a whole number >= 1, got " + (value == null ? "nothing" : value));
        }
        return value.asInt();
    }
}
