package io.hetgpu.extender.policy;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Every node's final score and how it came about, for the answer, the explanation event and the debug log: one row per
 * node, in request order.
 *
 * <p>Kept as columns (each scorer's values, the scores, the candidates), and a {@link Row} is made only when one is
 * asked for: a whole job's plan scores a few thousand nodes for each of its members and reads back one best row each,
 * and a row object with its own array of parts per node was a third of the plan.
 */
public final class ScoreTable {

    /**
     * @param node      node name
     * @param score     final score, 0..10
     * @param parts     each scorer's value in 0..1 (empty for a node that does not fit)
     * @param candidate what the node offers (null for a node that does not fit)
     * @param rejection why the node does not fit ("" when it does)
     */
    public record Row(String node, int score, double[] parts, Candidate candidate, String rejection) {
    }

    private static final double[] NO_PARTS = new double[0];

    /** How many rows of nodes that fit a placement's explanation names: the best and two runners-up. */
    public static final int EXPLAINED_ROWS = 3;

    private final List<String> scorers;
    /** Per scorer, each row's value (0 for a row that does not fit). */
    private final double[][] columns;
    private final int[] scores;
    /** What each row's node offers; null for a row that does not fit. */
    private final Candidate[] candidates;
    /** Each row's node name where its candidate does not say it; null throughout when every candidate does. */
    private final String[] names;
    /** Why each row's node does not fit; null where it fits, and null throughout when every row fits. */
    private final String[] rejections;
    /** Nodes that did not fit and have no row here: a {@link #summary} keeps their count, not their rows. */
    private final int refusedWithoutRows;

    /** A table of the rows as given (each row's parts in the order of {@code scorers}). */
    public ScoreTable(List<String> scorers, List<Row> rows) {
        this.scorers = List.copyOf(scorers);
        int size = rows.size();
        this.columns = new double[this.scorers.size()][size];
        this.scores = new int[size];
        this.candidates = new Candidate[size];
        this.names = new String[size];
        this.rejections = new String[size];
        for (int i = 0; i < size; i++) {
            var row = rows.get(i);
            scores[i] = row.score();
            candidates[i] = row.candidate();
            names[i] = Objects.requireNonNull(row.node(), "node");
            rejections[i] = row.rejection().isEmpty() ? null : row.rejection();
            for (int s = 0; s < row.parts().length; s++) {
                columns[s][i] = row.parts()[s];
            }
        }
        this.refusedWithoutRows = 0;
    }

    /**
     * A table of nodes that all fit, over columns the caller made and hands over: {@code columns[s][i]} is scorer s's
     * value for {@code candidates[i]}.
     */
    static ScoreTable ofFitting(List<String> scorers, double[][] columns, int[] scores, Candidate[] candidates) {
        return new ScoreTable(List.copyOf(scorers), columns, scores, candidates, null, null, 0);
    }

    /**
     * A table of {@code fitting}'s rows with the nodes that do not fit between them: row i is a refusal where
     * {@code refusedNodes[i]} is not null, else the next of {@code fitting}'s rows.
     */
    static ScoreTable withRefusals(ScoreTable fitting, String[] refusedNodes, String[] rejections) {
        int size = refusedNodes.length;
        var columns = new double[fitting.scorers.size()][size];
        var scores = new int[size];
        var candidates = new Candidate[size];
        int next = 0;
        for (int i = 0; i < size; i++) {
            if (refusedNodes[i] == null) {
                for (int s = 0; s < columns.length; s++) {
                    columns[s][i] = fitting.columns[s][next];
                }
                scores[i] = fitting.scores[next];
                candidates[i] = fitting.candidates[next];
                next++;
            }
        }
        return new ScoreTable(fitting.scorers, columns, scores, candidates, refusedNodes, rejections, 0);
    }

    private ScoreTable(List<String> scorers, double[][] columns, int[] scores, Candidate[] candidates, String[] names, String[] rejections,
                       int refusedWithoutRows) {
        this.scorers = scorers;
        this.columns = columns;
        this.scores = scores;
        this.candidates = candidates;
        this.names = names;
        this.rejections = rejections;
        this.refusedWithoutRows = refusedWithoutRows;
    }

    /**
     * The best {@code count} rows of nodes that fit, best first, and how many nodes did not fit: what an explanation of the
     * choice reads. A planned job keeps one per member until its plan is held, instead of a row per node for each member
     * (a 2,000-pod plan over 5,000 nodes kept ten million rows).
     */
    public ScoreTable summary(int count) {
        var best = bestFittingRows(count);
        var columns = new double[this.columns.length][best.length];
        var scores = new int[best.length];
        var candidates = new Candidate[best.length];
        for (int i = 0; i < best.length; i++) {
            for (int s = 0; s < columns.length; s++) {
                columns[s][i] = this.columns[s][best[i]];
            }
            scores[i] = this.scores[best[i]];
            candidates[i] = this.candidates[best[i]];
        }
        return new ScoreTable(scorers, columns, scores, candidates, null, null, refusedCount());
    }

    /** Names of the scorers, the columns of {@link Row#parts()}. */
    public List<String> scorers() {
        return scorers;
    }

    public int size() {
        return scores.length;
    }

    /** Row {@code i}'s final score, without making the row. */
    public int score(int i) {
        return scores[i];
    }

    /** What row {@code i}'s node offers, without making the row; null where it does not fit. */
    public Candidate candidate(int i) {
        return candidates[i];
    }

    /** Row {@code i}, made now. */
    public Row row(int i) {
        var candidate = candidates[i];
        String node = names != null && names[i] != null ? names[i] : candidate.name();
        String rejection = rejections != null && rejections[i] != null ? rejections[i] : "";
        if (candidate == null && !rejection.isEmpty()) {
            return new Row(node, scores[i], NO_PARTS, null, rejection);
        }
        var parts = new double[columns.length];
        for (int s = 0; s < parts.length; s++) {
            parts[s] = columns[s][i];
        }
        return new Row(node, scores[i], parts, candidate, rejection);
    }

    /** Every row, in request order: a view that makes each row as it is read. */
    public List<Row> rows() {
        return new AbstractList<>() {
            @Override
            public Row get(int index) {
                return row(Objects.checkIndex(index, scores.length));
            }

            @Override
            public int size() {
                return scores.length;
            }
        };
    }

    /** How many rows are of nodes that do not fit. */
    public int refusedCount() {
        int refused = refusedWithoutRows;
        for (var candidate : candidates) {
            refused += candidate == null ? 1 : 0;
        }
        return refused;
    }

    /** Rows best first; ties keep request order. */
    public List<Row> ranked() {
        return rows().stream().sorted(Comparator.comparingInt(Row::score).reversed()).toList();
    }

    /** The first of the best-scored rows, as {@link #ranked()} would put it first; null for an empty table. One pass, no sort. */
    public Row best() {
        int best = -1;
        for (int i = 0; i < scores.length; i++) {
            if (best < 0 || scores[i] > scores[best]) {
                best = i;
            }
        }
        return best < 0 ? null : row(best);
    }

    /**
     * The first {@code count} rows of nodes that fit, as {@link #ranked()} orders them (best first, ties in request
     * order), in one pass: a planned job explains each of its members from a table of thousands of rows.
     */
    public List<Row> bestFitting(int count) {
        return Arrays.stream(bestFittingRows(count)).mapToObj(this::row).toList();
    }

    private int[] bestFittingRows(int count) {
        var best = new ArrayList<Integer>(count + 1);
        for (int i = 0; i < scores.length; i++) {
            if (candidates[i] == null) {
                continue;
            }
            int at = best.size();
            while (at > 0 && scores[best.get(at - 1)] < scores[i]) {
                at--;
            }
            if (at < count) {
                best.add(at, i);
                if (best.size() > count) {
                    best.removeLast();
                }
            }
        }
        return best.stream().mapToInt(Integer::intValue).toArray();
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
