package io.hetgpu.testcluster.report;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** The demo's per-pod table as fixed-width text. */
public final class PlacementTable {

    private static final List<String> HEADER = List.of("POD", "JOB", "ROLE", "PRIO", "NODE", "RACK", "CARD", "GPUS", "NVLINK", "DATA");

    private PlacementTable() {
    }

    public static String render(List<Placement> placements) {
        var rows = new ArrayList<List<String>>();
        rows.add(HEADER);
        for (var p : placements) {
            rows.add(List.of(p.pod(), p.job(), p.role(), p.priority(), p.isPlaced() ? p.node() : "(pending)", p.rack(), p.cardText(),
                    p.gpus().isEmpty() ? "-" : p.gpus().stream().map(String::valueOf).collect(Collectors.joining(",")),
                    p.gpus().size() < 2 ? "-" : p.nvlinkSet() ? "yes" : "NO", p.data().text()));
        }
        int[] widths = new int[HEADER.size()];
        for (var row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        var text = new StringBuilder();
        for (var row : rows) {
            for (int i = 0; i < row.size(); i++) {
                text.append(i == row.size() - 1 ? row.get(i) : String.format("%-" + (widths[i] + 2) + "s", row.get(i)));
            }
            text.append(System.lineSeparator());
        }
        return text.toString();
    }
}
