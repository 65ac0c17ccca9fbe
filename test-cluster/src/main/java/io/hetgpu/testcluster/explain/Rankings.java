package io.hetgpu.testcluster.explain;

import io.hetgpu.extender.explain.PlacementExplanation;
import io.hetgpu.extender.explain.PodSpeeds;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The nodes a pod could take, best first, with the reasons the extender gives for each (what it offers, where it trails
 * the extender's best) and kube-scheduler's total beside its parts; and the refused nodes grouped by reason.
 */
final class Rankings {

    private Rankings() {
    }

    /**
     * kube-scheduler's ranking of a pod it scored: its totals, highest first (ties by name, the order explain breaks them
     * in), each split into the extender's points ({@code weight} × 10 × its 0..10 score) and kube-scheduler's own.
     *
     * @param table the extender's scores for the pod in that cycle, or null when none were given
     */
    static List<PodExplanation.Rank> scored(Decision.Bound bound, long weight, ScoreTable table, PodSpeeds speeds) {
        var rows = rowsByNode(table);
        var best = table == null ? null : table.best();
        var ranks = new ArrayList<PodExplanation.Rank>();
        bound.totals().entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .forEach(entry -> {
                    var node = entry.getKey();
                    long plugins = bound.pluginScores().getOrDefault(node, 0L);
                    int extender = (int) ((entry.getValue() - plugins) / (weight * ExtenderSettings.SCORE_SCALE));
                    ranks.add(new PodExplanation.Rank(node, entry.getValue(), extender, plugins, offer(rows.get(node)),
                            behind(table, best, rows.get(node), speeds)));
                });
        return ranks;
    }

    /** The extender's ranking alone, for a pod kube-scheduler scored nothing for (its job's plan gave it one node). */
    static List<PodExplanation.Rank> planned(ScoreTable table, PodSpeeds speeds) {
        var best = table.best();
        return table.ranked().stream().filter(row -> row.candidate() != null)
                .map(row -> new PodExplanation.Rank(row.node(), null, row.score(), null, PlacementExplanation.offer(row), behind(table, best, row, speeds)))
                .toList();
    }

    /** The nodes tied with the chosen one at the top total, the chosen one left out. */
    static List<String> tiedWith(Decision.Bound bound) {
        long top = bound.totals().getOrDefault(bound.node(), 0L);
        return bound.totals().entrySet().stream().filter(entry -> entry.getValue() == top && !entry.getKey().equals(bound.node()))
                .map(Map.Entry::getKey).sorted().toList();
    }

    /** The refused nodes grouped by reason, most nodes first, then by reason. */
    static List<PodExplanation.Refusal> refusals(Map<String, String> refused, Set<String> unresolvable) {
        var byReason = new TreeMap<String, List<String>>();
        refused.forEach((node, reason) -> byReason.computeIfAbsent(reason, r -> new ArrayList<>()).add(node));
        return byReason.entrySet().stream()
                .map(entry -> new PodExplanation.Refusal(entry.getKey(), entry.getValue().stream().sorted().toList(),
                        unresolvable.containsAll(entry.getValue())))
                .sorted(Comparator.comparingInt((PodExplanation.Refusal refusal) -> -refusal.nodes().size()).thenComparing(PodExplanation.Refusal::reason))
                .toList();
    }

    /**
     * The refusals of a pod its job's plan seated, with the nodes the plan's scores leave out: the extender's filter kept
     * only the seat's node for it and named the others in no list, and the planner scores only the nodes a member can
     * take, so of those nodes what is known is only that the plan could not seat the pod there.
     */
    static List<PodExplanation.Refusal> withUnseated(List<PodExplanation.Refusal> refusals, List<PodExplanation.Rank> ranking, List<String> nodes) {
        var accounted = new java.util.HashSet<String>();
        ranking.forEach(rank -> accounted.add(rank.node()));
        refusals.forEach(refusal -> accounted.addAll(refusal.nodes()));
        var unseated = nodes.stream().filter(node -> !accounted.contains(node)).sorted().toList();
        if (unseated.isEmpty()) {
            return refusals;
        }
        var all = new ArrayList<>(refusals);
        all.add(new PodExplanation.Refusal(UNSEATED, unseated, false));
        return all;
    }

    /** Said of the nodes a job's plan could not seat a pod on: the plan keeps no reason per node for a member it seats. */
    static final String UNSEATED = "its job's plan could not seat it here (the extender's filter refuses it here, or the job's "
            + "pods planned before it took the GPUs)";

    private static Map<String, ScoreTable.Row> rowsByNode(ScoreTable table) {
        var rows = new HashMap<String, ScoreTable.Row>();
        if (table != null) {
            table.rows().forEach(row -> rows.put(row.node(), row));
        }
        return rows;
    }

    private static String offer(ScoreTable.Row row) {
        return row == null || row.candidate() == null ? "" : PlacementExplanation.offer(row);
    }

    /** Where the row trails the best, the tier gap said with the pod's speeds where they decided it. */
    private static String behind(ScoreTable table, ScoreTable.Row best, ScoreTable.Row row, PodSpeeds speeds) {
        if (table == null || best == null || row == null || row.candidate() == null || row.node().equals(best.node())) {
            return "";
        }
        var gaps = PlacementExplanation.behind(table.scorers(), best, row, speeds);
        return gaps.isEmpty() ? "tied with the extender's best on every preference" : String.join(", ", gaps);
    }
}
