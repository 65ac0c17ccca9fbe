package io.hetgpu.extender.explain;

import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.policy.Proximity;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.gpu.PairLinks;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One sentence on where a pod would go and why the best alternatives lost, from a score table, in
 * units a user can check elsewhere:
 * "best: h100-1 scores 10/10 (2x H100, tier 85, 18 NVLinks per GPU pair); v100-2 3/10 (nvlink 2 vs 18 links per GPU pair, tier 40 V100 vs 85, newest preferred)".
 * Scores are the extender's 0..10 (what kube-scheduler multiplies by the extender's weight); a tier is
 * the card's rank in the tier table, as {@code hetgpu.io/gpu.tier} and the inventory print it; NVLink
 * quality is counted in links between the GPUs of the set; data and job locality name where the data
 * or the job's other pods are, seen from the node.
 */
public final class PlacementExplanation {

    /** How many runners-up an explanation names. */
    static final int ALTERNATIVES = ScoreTable.EXPLAINED_ROWS - 1;

    private PlacementExplanation() {
    }

    public static String of(ScoreTable table) {
        return of(table, PodSpeeds.NONE);
    }

    /**
     * The explanation, where the pod's speeds decided between two nodes said with the figures
     * ({@link LearnedSpeedWords}): "a100-1 4/10 (resnet50 runs 3.1x faster per GPU on H100 than on A100 (learned, 14 and
     * 9 runs))".
     */
    public static String of(ScoreTable table, PodSpeeds speeds) {
        // No sort: the prioritize verb and every member of a planned job explain themselves from thousands of rows.
        var fitting = table.bestFitting(ALTERNATIVES + 1);
        if (fitting.isEmpty()) {
            return "no node fits: " + table.rows().stream().limit(ALTERNATIVES + 1)
                    .map(row -> row.node() + ": " + row.rejection()).reduce((a, b) -> a + "; " + b).orElse("no nodes");
        }
        var best = fitting.getFirst();
        int refused = table.refusedCount();
        var text = new StringBuilder("best: ").append(best.node());
        if (fitting.size() == 1) {
            // No score to compare: with one node left, kube-scheduler scores nothing.
            text.append(", the only node that fits (").append(offer(best)).append(')');
        } else {
            text.append(" scores ").append(best.score()).append("/10 (").append(offer(best)).append(')');
        }
        for (var other : fitting.subList(1, fitting.size())) {
            text.append("; ").append(other.node()).append(' ').append(other.score()).append("/10");
            var behind = behind(table.scorers(), best, other, speeds);
            text.append(behind.isEmpty() ? " (tied with the best on every preference)" : " (" + String.join(", ", behind) + ")");
        }
        if (refused > 0 && fitting.size() == 1) {
            // No runner-up to compare with: why the others were refused is the explanation (an urgent pod's slower cards).
            int said = 0;
            for (int i = 0; i < table.size() && said < ALTERNATIVES; i++) {
                if (table.candidate(i) == null) {
                    var row = table.row(i);
                    text.append("; ").append(row.node()).append(": ").append(row.rejection());
                    said++;
                }
            }
            if (refused > said) {
                text.append("; ").append(refused - said).append(refused - said == 1 ? " more node does not fit" : " more nodes do not fit");
            }
        } else if (refused > 0) {
            text.append("; ").append(refused).append(refused == 1 ? " node does not fit" : " nodes do not fit");
        }
        return text.toString();
    }

    /** What a fitting node gives the pod, as an explanation says it: "8x H100, tier 85, 18 NVLinks per GPU pair", "CPU node". */
    public static String offer(ScoreTable.Row row) {
        var candidate = row.candidate();
        var set = candidate.set();
        var gpus = candidate.node().gpus();
        if (set.size() == 0) {
            return candidate.node().isGpuNode() ? "GPU node, no GPU taken" : "CPU node";
        }
        return switch (gpus.source()) {
            case NodeGpuSource.FeatureDiscoveryLabels labels -> set.size() + "x " + candidate.model()
                    + ", from GPU Feature Discovery labels" + (set.size() > 1 && !labels.knowsNvlink() ? ", links unknown" : "")
                    + ", tier " + candidate.tierRank();
            case NodeGpuSource.AllocatableOnly allocatable -> set.size() + "x GPU of unknown model, from allocatable only";
            default -> set.size() + "x " + candidate.model() + ", tier " + candidate.tierRank()
                    + (set.size() > 1 ? ", " + links(row) : "");
        };
    }

    /** The preferences on which the other node trails the best, largest gap first, each in its own unit; empty when tied. */
    public static List<String> behind(List<String> scorers, ScoreTable.Row best, ScoreTable.Row other) {
        return behind(scorers, best, other, PodSpeeds.NONE);
    }

    /** {@link #behind(List, ScoreTable.Row, ScoreTable.Row)}, the tier gap said with the pod's speeds where they decided it. */
    public static List<String> behind(List<String> scorers, ScoreTable.Row best, ScoreTable.Row other, PodSpeeds speeds) {
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
            parts.add(difference(scorers.get(s), other.parts()[s], best.parts()[s], other, best, speeds));
        }
        return parts;
    }

    private static String difference(String scorer, double otherPart, double bestPart, ScoreTable.Row other, ScoreTable.Row best,
                                     PodSpeeds speeds) {
        return switch (scorer) {
            case "tier" -> bySpeed(speeds, other, best).orElseGet(() -> tier(other, best, otherPart, bestPart));
            case "nvlink" -> "nvlink " + nvlink(other, best);
            case "data" -> "data " + Proximity.describe(otherPart) + " vs " + Proximity.describe(bestPart);
            case "job" -> "job's pods " + Proximity.describeJob(otherPart) + " vs " + Proximity.describeJob(bestPart);
            case "cpu" -> "a GPU node vs a CPU node";
            default -> String.format(Locale.ROOT, "%s %.2f vs %.2f", scorer, otherPart, bestPart);
        };
    }

    /**
     * Where the pod's class has figures on both sets and the other's is slower, the tier scorer ranked by them: said with
     * the figures. (A low-priority pod on an older card that is no slower lost for its tier: the tier wording says so.)
     */
    private static java.util.Optional<String> bySpeed(PodSpeeds speeds, ScoreTable.Row other, ScoreTable.Row best) {
        var mine = speeds.on(other.candidate());
        var theirs = speeds.on(best.candidate());
        if (mine.isEmpty() || theirs.isEmpty() || !(mine.get().perGpu() < theirs.get().perGpu())) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(LearnedSpeedWords.faster(speeds.workload(), theirs.get(), mine.get()));
    }

    /** Tier ranks from the tier table; when they are equal, the pod's own speed decided (an admin's throughput table). */
    private static String tier(ScoreTable.Row other, ScoreTable.Row best, double otherPart, double bestPart) {
        int otherRank = other.candidate().tierRank();
        int bestRank = best.candidate().tierRank();
        if (otherRank == bestRank || other.candidate().set().size() == 0) {
            return String.format(Locale.ROOT, "speed on these cards %.0f%% vs %.0f%% of the fastest", 100 * otherPart, 100 * bestPart);
        }
        return "tier " + otherRank + " " + other.candidate().model() + " vs " + bestRank
                + (otherRank > bestRank ? ", oldest preferred" : ", newest preferred");
    }

    private static String nvlink(ScoreTable.Row other, ScoreTable.Row best) {
        var mine = links(other);
        var theirs = links(best);
        var unit = " NVLinks per GPU pair";
        if (mine.endsWith(unit) && theirs.endsWith(unit)) {
            return mine.substring(0, mine.length() - unit.length()) + " vs " + theirs.substring(0, theirs.length() - unit.length())
                    + " links per GPU pair";
        }
        return mine + " vs " + theirs;
    }

    /**
     * How the set's GPUs are joined, in links: "12 NVLinks per GPU pair", "1-2 NVLinks per GPU pair",
     * "NVLink on 4 of 6 GPU pairs" or "PCIe only (SYS)", the worst PCIe path named.
     */
    static String links(ScoreTable.Row row) {
        var candidate = row.candidate();
        var gpus = candidate.node().gpus();
        if (!gpus.source().knowsNvlink()) {
            return "links unknown";
        }
        var links = PairLinks.among(gpus.topology().links(), candidate.set().positions());
        if (links.nvlinkPairs() == links.pairs()) {
            return links.linkCount() + " NVLinks per GPU pair";
        }
        if (links.nvlinkPairs() == 0) {
            return "PCIe only (" + links.worstPcie().token() + ")";
        }
        return "NVLink on " + links.nvlinkPairs() + " of " + links.pairs() + " GPU pairs";
    }
}
