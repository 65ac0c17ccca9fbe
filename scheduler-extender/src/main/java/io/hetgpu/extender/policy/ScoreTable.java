package io.hetgpu.extender.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Every node's final score and how it came about, for the answer, the explanation event and the debug log.
 *
 * @param scorers names of the scorers, the columns of {@link Row#parts()}
 * @param rows    one row per node, in request order
 */
public record ScoreTable(List<String> scorers, List<Row> rows) {

    public ScoreTable {
        scorers = List.copyOf(scorers);
        rows = List.copyOf(rows);
    }

    /**
     * @param node      node name
     * @param score     final score, 0..10
     * @param parts     each scorer's value in 0..1 (empty for a node that does not fit)
     * @param candidate what the node offers (null for a node that does not fit)
     * @param rejection why the node does not fit ("" when it does)
     */
    public record Row(String node, int score, double[] parts, Candidate candidate, String rejection) {
    }

    /** Rows best first; ties keep request order. */
    public List<Row> ranked() {
        return rows.stream().sorted(Comparator.comparingInt(Row::score).reversed()).toList();
    }

    /** The first of the best-scored rows, as {@link #ranked()} would put it first; null for an empty table. One pass, no sort. */
    public Row best() {
        Row best = null;
        for (var row : rows) {
            if (best == null || row.score() > best.score()) {
                best = row;
            }
        }
        return best;
    }

    /**
     * The first {@code count} rows of nodes that fit, as {@link #ranked()} orders them (best first, ties in request
     * order), in one pass: a planned job explains each of its members from a table of thousands of rows.
     */
    public List<Row> bestFitting(int count) {
        var best = new ArrayList<Row>(count + 1);
        for (var row : rows) {
            if (row.candidate() == null) {
                continue;
            }
            int at = best.size();
            while (at > 0 && best.get(at - 1).score() < row.score()) {
                at--;
            }
            if (at < count) {
                best.add(at, row);
                if (best.size() > count) {
                    best.removeLast();
                }
            }
        }
        return best;
    }

    /** The table as aligned text, for the debug log. */
    public String render() {
        var text = new StringBuilder(String.format("%-24s %5s", "node", "score"));
        scorers.forEach(name -> text.append(String.format(" %6s", name)));
        text.append("  offers\n");
        for (var row : ranked()) {
            text.append(String.format("%-24s %5d", row.node(), row.score()));
            if (row.candidate() == null) {
                text.append("  refused: ").append(row.rejection()).append('\n');
                continue;
            }
            for (double part : row.parts()) {
                text.append(String.format(" %6.2f", part));
            }
            var candidate = row.candidate();
            text.append("  ").append(candidate.set().size() == 0 ? "no GPUs"
                    : candidate.set().size() + "x " + candidate.model() + " link " + candidate.set().linkScore()).append('\n');
        }
        return text.toString();
    }
}
