package io.hetgpu.testcluster.demo;

import io.hetgpu.testcluster.report.DataDistance;
import io.hetgpu.testcluster.report.Placement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** The few numbers that say whether a placement did what the mission asks, one scheduler at a time. */
record DemoSummary(Map<String, String> figures) {

    private static final Set<String> NEWEST_CARDS = Set.of("H100", "A100");
    private static final Set<String> OLDEST_CARDS = Set.of("K80");

    static DemoSummary of(List<Placement> placements) {
        var figures = new LinkedHashMap<String, String>();
        var placed = placements.stream().filter(Placement::isPlaced).toList();
        figures.put("pods placed", placed.size() + " of " + placements.size());
        figures.put("high-priority GPUs on H100/A100", share(placed, p -> p.priority().equals("high"), p -> NEWEST_CARDS.contains(p.card())));
        figures.put("low-priority GPUs on K80", share(placed, p -> p.priority().equals("low"), p -> OLDEST_CARDS.contains(p.card())));
        var multi = placed.stream().filter(p -> p.gpus().size() > 1).toList();
        figures.put("multi-GPU pods on one NVLink set", multi.stream().filter(Placement::nvlinkSet).count() + " of " + multi.size());
        var resnetRacks = placed.stream().filter(p -> p.job().equals("resnet")).map(Placement::rack).collect(Collectors.toCollection(java.util.TreeSet::new));
        figures.put("racks the resnet job spans", resnetRacks.size() + " " + resnetRacks);
        var withData = placed.stream().filter(p -> p.data() != DataDistance.NO_DATA).toList();
        figures.put("resnet pods in the data's rack", withData.stream().filter(p -> p.data() == DataDistance.SAME_RACK).count() + " of " + withData.size());
        figures.put("CPU-only pods on GPU nodes", placed.stream().filter(p -> p.gpus().isEmpty() && !p.card().equals("cpu")).count()
                + " of " + placed.stream().filter(p -> p.gpus().isEmpty()).count());
        return new DemoSummary(figures);
    }

    /** Share of GPUs held by the pods of {@code who} that sit on cards matching {@code where}. */
    private static String share(List<Placement> placed, java.util.function.Predicate<Placement> who, java.util.function.Predicate<Placement> where) {
        int total = placed.stream().filter(who).mapToInt(p -> p.gpus().size()).sum();
        int matching = placed.stream().filter(who).filter(where).mapToInt(p -> p.gpus().size()).sum();
        return total == 0 ? "-" : String.format("%d of %d (%d%%)", matching, total, Math.round(100.0 * matching / total));
    }

    /** The comparison as rows, the header first: metric, then one column per scheduler. */
    static List<List<String>> rows(Map<String, DemoSummary> bySchedulers) {
        var rows = new java.util.ArrayList<List<String>>();
        var header = new java.util.ArrayList<String>();
        header.add("");
        header.addAll(bySchedulers.keySet());
        rows.add(header);
        for (var metric : bySchedulers.values().iterator().next().figures().keySet()) {
            var row = new java.util.ArrayList<String>();
            row.add(metric);
            bySchedulers.values().forEach(summary -> row.add(summary.figures().get(metric)));
            rows.add(row);
        }
        return rows;
    }

    /** Side by side: metric, then one column per scheduler. */
    static String compare(Map<String, DemoSummary> bySchedulers) {
        var metrics = bySchedulers.values().iterator().next().figures().keySet();
        int nameWidth = metrics.stream().mapToInt(String::length).max().orElse(10) + 2;
        var text = new StringBuilder(String.format("%-" + nameWidth + "s", ""));
        bySchedulers.keySet().forEach(s -> text.append(String.format("%-24s", s)));
        text.append(System.lineSeparator());
        for (var metric : metrics) {
            text.append(String.format("%-" + nameWidth + "s", metric));
            bySchedulers.values().forEach(summary -> text.append(String.format("%-24s", summary.figures().get(metric))));
            text.append(System.lineSeparator());
        }
        return text.toString();
    }
}
