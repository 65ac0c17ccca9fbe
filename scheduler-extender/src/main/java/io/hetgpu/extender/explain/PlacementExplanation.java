package io.hetgpu.extender.explain;

import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.policy.ScoreTable;
import java.util.ArrayList;
import java.util.List;

/**
 * One sentence on where a pod would go and why the best alternatives lost, from a score table:
 * "best: h100-1 (10; 2x H100, link 1800); dgx-2 scored 6 (tier 0.40 vs 1.00); k80-1 scored 0 (tier 0.00 vs 1.00, nvlink 0.03 vs 1.00)".
 */
public final class PlacementExplanation {

    /** How many runners-up an explanation names. */
    static final int ALTERNATIVES = 2;

    private PlacementExplanation() {
    }

    public static String of(ScoreTable table) {
        var fitting = table.ranked().stream().filter(row -> row.candidate() != null).toList();
        if (fitting.isEmpty()) {
            return "no node fits: " + table.rows().stream().limit(ALTERNATIVES + 1)
                    .map(row -> row.node() + ": " + row.rejection()).reduce((a, b) -> a + "; " + b).orElse("no nodes");
        }
        var best = fitting.getFirst();
        var text = new StringBuilder("best: ").append(best.node()).append(" (").append(best.score()).append("; ").append(offer(best)).append(')');
        for (var other : fitting.subList(1, Math.min(fitting.size(), ALTERNATIVES + 1))) {
            text.append("; ").append(other.node()).append(" scored ").append(other.score());
            var behind = behind(table.scorers(), best, other);
            text.append(behind.isEmpty() ? " (tied on every preference)" : " (" + String.join(", ", behind) + ")");
        }
        int refused = table.rows().size() - fitting.size();
        if (refused > 0) {
            text.append("; ").append(refused).append(refused == 1 ? " node does not fit" : " nodes do not fit");
        }
        return text.toString();
    }

    private static String offer(ScoreTable.Row row) {
        var set = row.candidate().set();
        var gpus = row.candidate().node().gpus();
        if (set.size() == 0) {
            return row.candidate().node().isGpuNode() ? "GPU node" : "CPU node";
        }
        return switch (gpus.source()) {
            case NodeGpuSource.FeatureDiscoveryLabels labels -> set.size() + "x " + row.candidate().model()
                    + ", from GPU Feature Discovery labels" + (set.size() > 1 && !labels.knowsNvlink() ? ", links unknown" : "");
            case NodeGpuSource.AllocatableOnly allocatable -> set.size() + "x GPU of unknown model, from allocatable only";
            default -> set.size() + "x " + row.candidate().model() + (set.size() > 1 ? ", link " + set.linkScore() : "");
        };
    }

    /** The preferences on which the other node trails the best, largest gap first. */
    private static List<String> behind(List<String> scorers, ScoreTable.Row best, ScoreTable.Row other) {
        var gaps = new ArrayList<double[]>();
        for (int s = 0; s < scorers.size(); s++) {
            double gap = best.parts()[s] - other.parts()[s];
            if (gap > 0.005) {
                gaps.add(new double[] {s, gap});
            }
        }
        gaps.sort((a, b) -> Double.compare(b[1], a[1]));
        var parts = new ArrayList<String>();
        for (var gap : gaps) {
            int s = (int) gap[0];
            parts.add(String.format("%s %.2f vs %.2f", scorers.get(s), other.parts()[s], best.parts()[s]));
        }
        return parts;
    }
}
