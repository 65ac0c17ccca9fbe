package io.hetgpu.extender.model;

import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Reads the {@code hetgpu.io/data-locality} annotation of a PV or PVC: clauses {@code node=n1,n2},
 * {@code rack=r1}, {@code zone=z1}, separated by {@code ;} or whitespace.
 */
public final class DataLocalityParser {

    private DataLocalityParser() {
    }

    public static DataLocality parse(String text) throws IllegalArgumentException {
        Set<String> nodes = new LinkedHashSet<>();
        Set<String> racks = new LinkedHashSet<>();
        Set<String> zones = new LinkedHashSet<>();
        for (var clause : text.strip().split("[;\\s]+")) {
            if (clause.isEmpty()) {
                continue;
            }
            int eq = clause.indexOf('=');
            var key = eq < 0 ? "" : clause.substring(0, eq).toLowerCase(Locale.ROOT);
            var target = switch (key) {
                case "node" -> nodes;
                case "rack" -> racks;
                case "zone" -> zones;
                default -> throw new IllegalArgumentException(HetgpuKeys.DATA_LOCALITY
                        + ": expected clauses node=…, rack=… or zone=…, got " + Quote.of(text));
            };
            for (var value : clause.substring(eq + 1).split(",")) {
                if (!value.isBlank()) {
                    target.add(value.strip());
                }
            }
        }
        var locality = new DataLocality(nodes, racks, zones);
        if (locality.isEmpty()) {
            throw new IllegalArgumentException(HetgpuKeys.DATA_LOCALITY + ": names no node, rack or zone: " + Quote.of(text));
        }
        return locality;
    }
}
