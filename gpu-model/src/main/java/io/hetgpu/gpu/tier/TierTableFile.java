package io.hetgpu.gpu.tier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hetgpu.gpu.ComputeCapability;
import java.util.ArrayList;
import java.util.List;

/**
 * An admin's card-table overrides: the {@code tiers:} list of a YAML (or JSON) document, other keys
 * ignored, so the device plugin (for its {@code gpu.tier} label) and the scheduler extender (for its
 * scores) can read the very same ConfigMap file:
 *
 * <pre>{@code
 * tiers:
 *   - {model: L40S, rank: 65, computeCapability: "8.9", maxMemoryMiB: 46068}
 * }</pre>
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
            throw new IllegalArgumentException(source + ": not YAML or JSON: " + e.getOriginalMessage());
        }
        var tiers = root == null ? null : root.get("tiers");
        if (tiers == null || tiers.isNull()) {
            return List.of();
        }
        if (!tiers.isArray()) {
            throw new IllegalArgumentException(source + ": tiers: expected a list, got " + tiers);
        }
        var cards = new ArrayList<KnownCard>();
        for (int i = 0; i < tiers.size(); i++) {
            var path = source + ": tiers[" + i + "]";
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
