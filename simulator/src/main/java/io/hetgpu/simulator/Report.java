package io.hetgpu.simulator;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The report: a Markdown table per workload and PNG bar charts made with XChart. */
public final class Report {

    private Report() {
    }

    /** The widest a line of the report may be: it is read in terminals and diffs as well as rendered. */
    static final int COLUMNS = 100;

    /**
     * The figures of every policy, in five tables narrow enough for {@link #COLUMNS}; the first summary is
     * the baseline the × columns compare with. Under them, which policies came out identical to an earlier one.
     */
    public static String table(List<Summary> summaries) {
        var baseline = summaries.getFirst();
        var text = new StringBuilder();
        text.append(wrap("**High-priority jobs**: completion time (arrival to end) in hours; × is the speed-up of the "
                + "mean against " + baseline.policy() + ".")).append("\n\n");
        text.append(markdown(List.of("policy", "mean", "×", "p99"), summaries.stream().map(s -> List.of(s.policy(),
                twoDecimals(s.meanJctHigh()), speedUp(baseline.meanJctHigh(), s.meanJctHigh()), twoDecimals(s.p99JctHigh()))).toList()));
        text.append('\n').append(wrap("**Other jobs** (neutral and low priority) and **all jobs**: completion time in hours.")).append("\n\n");
        text.append(markdown(List.of("policy", "other mean", "other p99", "all mean", "all ×"), summaries.stream().map(s -> List.of(
                s.policy(), twoDecimals(s.meanJctOther()), twoDecimals(s.p99JctOther()), twoDecimals(s.meanJct()), speedUp(baseline.meanJct(), s.meanJct())))
                .toList()));
        var sizes = summaries.stream().flatMap(s -> s.otherJctByGpus().keySet().stream()).distinct().sorted().toList();
        if (sizes.size() > 1) {
            text.append('\n').append(wrap("**Other jobs by size**: their mean completion time in hours by GPUs per job. Where the "
                    + "cluster is loaded the largest jobs wait longest, and their wait makes most of the mean.")).append("\n\n");
            text.append(markdown(sizeHeaders(sizes), summaries.stream().map(s -> sizeRow(s.policy(), sizes, s.otherJctByGpus())).toList()));
        }
        text.append('\n').append(wrap("**The cluster**: jobs placed, first arrival to last completion (makespan), mean wait from "
                + "arrival to start, and GPU-hours used over GPUs × makespan.")).append("\n\n");
        text.append(markdown(List.of("policy", "jobs", "makespan h", "queueing h", "GPU util"), summaries.stream().map(s -> List.of(
                s.policy(), Integer.toString(s.jobs()), String.format(Locale.ROOT, "%.1f", s.makespan()), twoDecimals(s.meanQueueing()),
                percent(s.gpuUtilisation()))).toList()));
        text.append('\n').append(wrap("**Placement**: share of high-priority GPU-hours on the top-tier cards, share of multi-GPU "
                + "jobs on one NVLink-connected set, and ps/worker gradient traffic that crossed racks.")).append("\n\n");
        text.append(markdown(List.of("policy", "high on top tier", "NVLink sets", "cross-rack TB"), summaries.stream().map(s -> List.of(
                s.policy(), percent(s.highOnTopTier()), percent(s.multiGpuOnNvlink()), twoDecimals(s.crossRackTb()))).toList()));
        text.append('\n').append(wrap("**Preemption**: jobs evicted, GPU-hours lost (work since each victim's last checkpoint, and "
                + "restarts), and the steady state's mean completion times (jobs " + Summary.STEADY_FROM + " to " + (Summary.STEADY_TO - 1)
                + ", as Gavel reports it; – for a shorter trace).")).append("\n\n");
        text.append(markdown(List.of("policy", "evicted", "GPU-h lost", "steady high", "steady all"), summaries.stream().map(s -> List.of(
                s.policy(), Integer.toString(s.preemptions()), String.format(Locale.ROOT, "%.0f", s.gpuHoursLost()),
                s.steadyJct() > 0 ? twoDecimals(s.steadyJctHigh()) : "–", s.steadyJct() > 0 ? twoDecimals(s.steadyJct()) : "–")).toList()));
        text.append('\n').append(wrap("**Half-placed jobs**: jobs that ever waited with some of their pods placed and others not "
                + "(pods holding GPUs, cpu and memory for a job that cannot run yet), of those the jobs whose pods held GPUs for longer "
                + "at a stretch than the extender's plan deadline (" + (int) Summary.HalfPlacedJobs.DEADLINE_SECONDS + " s), the GPU-hours "
                + "held by pods of incomplete jobs, and the longest such stretch.")).append("\n\n");
        text.append(markdown(List.of("policy", "half-placed", "> deadline", "GPU-h held", "longest h"), summaries.stream().map(s -> List.of(
                s.policy(), Integer.toString(s.halfPlaced().jobs()), Integer.toString(s.halfPlaced().beyondDeadline()),
                String.format(Locale.ROOT, "%.0f", s.halfPlaced().gpuHours()), twoDecimals(s.halfPlaced().longestHours()))).toList()));
        var notes = new StringBuilder();
        summaries.stream().filter(s -> s.neverPlaced() > 0).forEach(s -> notes.append(wrap("- "
                + s.policy() + ": " + s.neverPlaced() + " jobs never started (no node could ever take them, or they were left half-placed "
                + "with nothing else running), left out of the figures but for half-placed jobs.", "  ")).append('\n'));
        sameAsEarlier(summaries).forEach((policy, earlier) -> notes.append(wrap("- "
                + policy + " is identical to " + earlier + " in every figure: on this trace, what it changes makes no difference.", "  "))
                .append('\n'));
        if (!notes.isEmpty()) {
            text.append('\n').append(notes);
        }
        return text.toString();
    }

    /**
     * Each policy whose figures equal an earlier policy's, with the first such: an ablation that changes
     * nothing on a trace (hetgpu-no-cpu where no pod without GPUs has a CPU node to go to) says so rather than
     * looking like a measured effect of zero.
     */
    static Map<String, String> sameAsEarlier(List<Summary> summaries) {
        var same = new LinkedHashMap<String, String>();
        for (int i = 1; i < summaries.size(); i++) {
            var figures = summaries.get(i);
            summaries.stream().limit(i).filter(earlier -> earlier.withPolicy("").equals(figures.withPolicy(""))).findFirst()
                    .ifPresent(earlier -> same.put(figures.policy(), earlier.policy()));
        }
        return same;
    }

    /** A Markdown table whose columns are padded, so that the raw text lines up as well; the first column left, the rest right. */
    static String markdown(List<String> headers, List<List<String>> rows) {
        var widths = new int[headers.size()];
        for (int c = 0; c < widths.length; c++) {
            widths[c] = Math.max(3, headers.get(c).length());
            for (var row : rows) {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        var text = new StringBuilder();
        appendRow(text, headers, widths);
        text.append('|');
        for (int c = 0; c < widths.length; c++) {
            text.append(c == 0 ? "-".repeat(widths[c] + 2) : "-".repeat(widths[c] + 1) + ":").append('|');
        }
        text.append('\n');
        rows.forEach(row -> appendRow(text, row, widths));
        return text.toString();
    }

    private static void appendRow(StringBuilder text, List<String> cells, int[] widths) {
        text.append('|');
        for (int c = 0; c < widths.length; c++) {
            var pad = " ".repeat(widths[c] - cells.get(c).length());
            text.append(' ').append(c == 0 ? cells.get(c) + pad : pad + cells.get(c)).append(" |");
        }
        text.append('\n');
    }

    /** The text broken at spaces into lines of at most {@link #COLUMNS} characters (a longer word keeps its own line). */
    static String wrap(String text) {
        return wrap(text, "");
    }

    /** The same, each line after the first starting with {@code indent} (a list item's continuation). */
    static String wrap(String text, String indent) {
        var lines = new ArrayList<String>();
        var line = new StringBuilder();
        for (var word : text.split(" ")) {
            int prefix = lines.isEmpty() ? 0 : indent.length();
            if (!line.isEmpty() && prefix + line.length() + 1 + word.length() > COLUMNS) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (!line.isEmpty()) {
                line.append(' ');
            }
            line.append(word);
        }
        lines.add(line.toString());
        return String.join("\n" + indent, lines);
    }

    private static String twoDecimals(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static String percent(double share) {
        return String.format(Locale.ROOT, "%.1f %%", 100 * share);
    }

    /** What the ceiling says about the same trace: how far any scheduler could get past the baseline. */
    public static String ceiling(PlacementCeiling ceiling, Summary baseline) {
        return wrap(String.format(Locale.ROOT, """
                **Ceiling** (every job started on arrival on its fastest cards and layout; no scheduler, preemptive or \
                not, does better): mean JCT high %.2f h (at most %s against %s), other %.2f h, all %.2f h (at most %s). \
                Offered load at those speeds: %.2f of the cluster's GPU-hours between the first and last arrival%s.%s
                """, ceiling.meanJctHigh(), speedUp(baseline.meanJctHigh(), ceiling.meanJctHigh()), baseline.policy(),
                ceiling.meanJctRest(), ceiling.meanJct(), speedUp(baseline.meanJct(), ceiling.meanJct()), ceiling.offeredLoad(),
                ceiling.offeredLoad() > 1 ? " (above 1: no scheduler keeps up; completion times grow with the trace's length)" : "",
                ceiling.unplaceable() == 0 ? "" : " " + ceiling.unplaceable() + " jobs fit no node and are left out.").strip()) + "\n";
    }

    /**
     * High-priority jobs' mean completion time by GPUs per job, with the ceiling's for the same jobs: where a policy
     * trails the ceiling (e.g. multi-GPU jobs whose pods end up on several nodes). Empty for a trace of one size.
     */
    public static String highBySize(List<Summary> summaries, PlacementCeiling ceiling) {
        var sizes = ceiling.highByGpus().keySet().stream().toList();
        if (sizes.size() < 2) {
            return "";
        }
        var rows = new ArrayList<List<String>>();
        summaries.forEach(s -> rows.add(sizeRow(s.policy(), sizes, s.highJctByGpus())));
        rows.add(sizeRow("ceiling", sizes, ceiling.highByGpus()));
        return wrap("**High-priority jobs by size**: their mean completion time in hours by GPUs per job, beside the "
                + "ceiling's for the same jobs.") + "\n\n" + markdown(sizeHeaders(sizes), rows);
    }

    /** "policy", then "1 GPU", "2 GPUs"…: the header of a table by job size. */
    private static List<String> sizeHeaders(List<Integer> sizes) {
        var headers = new ArrayList<String>(List.of("policy"));
        sizes.forEach(gpus -> headers.add(gpus + (gpus == 1 ? " GPU" : " GPUs")));
        return List.copyOf(headers);
    }

    /** A row of a table by job size: each size's hours, or – where the row has no job of that size. */
    private static List<String> sizeRow(String name, List<Integer> sizes, Map<Integer, Double> hoursBySize) {
        var row = new ArrayList<String>(List.of(name));
        sizes.forEach(gpus -> row.add(hoursBySize.containsKey(gpus) ? twoDecimals(hoursBySize.get(gpus)) : "–"));
        return List.copyOf(row);
    }

    /** Seeds per table, so that a table of the longest policy name stays within 100 columns. */
    private static final int SEEDS_PER_TABLE = 3;

    /**
     * Each policy's speed-up over the baseline (the first summary of each seed), high priority / all jobs,
     * in tables of {@value #SEEDS_PER_TABLE} seeds each, then a table of the least, median and most
     * high-priority speed-up over the seeds; the ceiling last in each.
     */
    public static String seedTable(SortedMap<Long, List<Summary>> bySeed, Map<Long, PlacementCeiling> ceilings) {
        return seedTable(bySeed, ceilings, Map.of());
    }

    /**
     * The same, then the steady-state window's speed-ups (when {@code steadyCeilings} has the window's ceiling for
     * each seed), each policy's distance from the ceiling and overall speed-up over the seeds, and what preemption
     * cost on each seed.
     */
    public static String seedTable(SortedMap<Long, List<Summary>> bySeed, Map<Long, PlacementCeiling> ceilings,
                                   Map<Long, PlacementCeiling> steadyCeilings) {
        var seeds = List.copyOf(bySeed.keySet());
        var rows = new LinkedHashMap<String, List<String>>();
        var highRatios = new LinkedHashMap<String, double[]>();
        var policies = bySeed.get(seeds.getFirst()).stream().skip(1).map(Summary::policy).toList();
        for (int p = 0; p < policies.size(); p++) {
            int position = p + 1;
            row(rows, highRatios, policies.get(p), seeds, seed -> bySeed.get(seed).getFirst(),
                    seed -> bySeed.get(seed).get(position).meanJctHigh(), seed -> bySeed.get(seed).get(position).meanJct());
        }
        row(rows, highRatios, "ceiling (any scheduler)", seeds, seed -> bySeed.get(seed).getFirst(),
                seed -> ceilings.get(seed).meanJctHigh(), seed -> ceilings.get(seed).meanJct());
        var text = new StringBuilder();
        text.append(perSeed(seeds, "policy (high × / all ×)", rows)).append('\n');
        text.append(markdown(List.of("policy", "least high ×", "median", "most"), highRatios.entrySet().stream()
                .map(entry -> spread(entry.getKey(), entry.getValue())).toList()));
        if (steadyCeilings.keySet().containsAll(seeds)) {
            var steadyRows = new LinkedHashMap<String, List<String>>();
            var unused = new LinkedHashMap<String, double[]>();
            Function<Long, Summary> steadyBaseline = seed -> steady(bySeed.get(seed).getFirst());
            for (int p = 0; p < policies.size(); p++) {
                int position = p + 1;
                row(steadyRows, unused, policies.get(p), seeds, steadyBaseline,
                        seed -> bySeed.get(seed).get(position).steadyJctHigh(), seed -> bySeed.get(seed).get(position).steadyJct());
            }
            row(steadyRows, unused, "ceiling (any scheduler)", seeds, steadyBaseline,
                    seed -> steadyCeilings.get(seed).meanJctHigh(), seed -> steadyCeilings.get(seed).meanJct());
            text.append('\n').append(wrap("**Steady state** (jobs " + Summary.STEADY_FROM + " to " + (Summary.STEADY_TO - 1)
                    + ", as Gavel reports it): speed-up of mean JCT over " + bySeed.get(seeds.getFirst()).getFirst().policy()
                    + " on the same jobs, high priority / all jobs.")).append("\n\n");
            text.append(perSeed(seeds, "policy (high × / all ×)", steadyRows));
        }
        text.append('\n').append(targets(bySeed, ceilings));
        text.append(learning(bySeed));
        return text.toString();
    }

    /** The baseline's steady-state figures in the places {@link #row} reads the whole trace's. */
    private static Summary steady(Summary baseline) {
        return new Summary(baseline.policy(), baseline.jobs(), baseline.steadyJctHigh(), 0, 0, 0, baseline.steadyJct(), 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0);
    }

    /** Rows of cells per seed, in tables of {@value #SEEDS_PER_TABLE} seeds. */
    private static String perSeed(List<Long> seeds, String header, Map<String, List<String>> rows) {
        var text = new StringBuilder();
        for (int from = 0; from < seeds.size(); from += SEEDS_PER_TABLE) {
            int to = Math.min(seeds.size(), from + SEEDS_PER_TABLE);
            var headers = new ArrayList<>(List.of(header));
            seeds.subList(from, to).forEach(seed -> headers.add("seed " + seed));
            int first = from;
            text.append(from == 0 ? "" : "\n").append(markdown(headers, rows.entrySet().stream().<List<String>>map(row -> {
                var cells = new ArrayList<>(List.of(row.getKey()));
                cells.addAll(row.getValue().subList(first, to));
                return cells;
            }).toList()));
        }
        return text.toString();
    }

    /**
     * Over the seeds: each policy's high-priority mean JCT above the ceiling's (median and worst seed), its overall
     * speed-up (median and least), and on how many seeds preemption cost it no more GPU-hours than the baseline;
     * then evictions and GPU-hours lost per seed.
     */
    private static String targets(SortedMap<Long, List<Summary>> bySeed, Map<Long, PlacementCeiling> ceilings) {
        var seeds = List.copyOf(bySeed.keySet());
        var baselineName = bySeed.get(seeds.getFirst()).getFirst().policy();
        var text = new StringBuilder(wrap("**Against the ceiling and the baseline**, over the seeds: high-priority mean JCT above the "
                + "ceiling's (vs ceiling: median seed; worst seed), all jobs' speed-up over " + baselineName + " (median; least), and the "
                + "seeds on which preemption lost no more GPU-hours than " + baselineName + "'s (lost ≤ base).")).append("\n\n");
        var rows = new ArrayList<List<String>>();
        var lost = new LinkedHashMap<String, List<String>>();
        int policies = bySeed.get(seeds.getFirst()).size();
        for (int p = 0; p < policies; p++) {
            var overCeiling = new double[seeds.size()];
            var allRatio = new double[seeds.size()];
            int noWorse = 0;
            var lostCells = new ArrayList<String>();
            for (int i = 0; i < seeds.size(); i++) {
                var baseline = bySeed.get(seeds.get(i)).getFirst();
                var summary = bySeed.get(seeds.get(i)).get(p);
                overCeiling[i] = summary.meanJctHigh() / ceilings.get(seeds.get(i)).meanJctHigh() - 1;
                allRatio[i] = baseline.meanJct() / summary.meanJct();
                noWorse += summary.gpuHoursLost() <= baseline.gpuHoursLost() ? 1 : 0;
                lostCells.add(String.format(Locale.ROOT, "%d / %.0f", summary.preemptions(), summary.gpuHoursLost()));
            }
            var policy = bySeed.get(seeds.getFirst()).get(p).policy();
            Arrays.sort(overCeiling);
            Arrays.sort(allRatio);
            rows.add(List.of(policy, String.format(Locale.ROOT, "%+.1f %%", 100 * median(overCeiling)),
                    String.format(Locale.ROOT, "%+.1f %%", 100 * overCeiling[overCeiling.length - 1]),
                    String.format(Locale.ROOT, "%.2f×", median(allRatio)), String.format(Locale.ROOT, "%.2f×", allRatio[0]),
                    noWorse + " of " + seeds.size()));
            lost.put(policy, lostCells);
        }
        text.append(markdown(List.of("policy", "vs ceiling", "worst", "all ×", "least", "lost ≤ base"), rows));
        text.append(againstWholeWorkload(bySeed));
        text.append('\n').append(wrap("**Preemption**: jobs evicted / GPU-hours lost (work since the last checkpoint, and restarts).")).append("\n\n");
        text.append(perSeed(seeds, "policy (evicted / GPU-h lost)", lost));
        var halfPlaced = new LinkedHashMap<String, List<String>>();
        for (int p = 0; p < policies; p++) {
            var cells = new ArrayList<String>();
            for (var seed : seeds) {
                var spent = bySeed.get(seed).get(p).halfPlaced();
                cells.add(String.format(Locale.ROOT, "%d / %d / %.0f", spent.jobs(), spent.beyondDeadline(), spent.gpuHours()));
            }
            halfPlaced.put(bySeed.get(seeds.getFirst()).get(p).policy(), cells);
        }
        text.append('\n').append(wrap("**Half-placed jobs**: jobs that ever waited half-placed / of them, holding GPUs longer than the "
                + "plan deadline (" + (int) Summary.HalfPlacedJobs.DEADLINE_SECONDS + " s) / GPU-hours held by pods of incomplete jobs.")).append("\n\n");
        text.append(perSeed(seeds, "policy (jobs / > deadline / GPU-h)", halfPlaced));
        return text.toString();
    }

    /**
     * Each policy against the baseline that admits every job whole ({@link KubernetesDefaultPlacer#WHOLE_WORKLOAD}), when
     * the run has it: the comparison of earlier releases, whose baseline admitted that way.
     */
    private static String againstWholeWorkload(SortedMap<Long, List<Summary>> bySeed) {
        var seeds = List.copyOf(bySeed.keySet());
        var names = bySeed.get(seeds.getFirst()).stream().map(Summary::policy).toList();
        int whole = names.indexOf(KubernetesDefaultPlacer.WHOLE_WORKLOAD);
        if (whole < 0) {
            return "";
        }
        var rows = new ArrayList<List<String>>();
        for (int p = 0; p < names.size(); p++) {
            var high = new double[seeds.size()];
            var all = new double[seeds.size()];
            int noWorse = 0;
            for (int i = 0; i < seeds.size(); i++) {
                var base = bySeed.get(seeds.get(i)).get(whole);
                var summary = bySeed.get(seeds.get(i)).get(p);
                high[i] = base.meanJctHigh() / summary.meanJctHigh();
                all[i] = base.meanJct() / summary.meanJct();
                noWorse += summary.gpuHoursLost() <= base.gpuHoursLost() ? 1 : 0;
            }
            Arrays.sort(high);
            Arrays.sort(all);
            rows.add(List.of(names.get(p), String.format(Locale.ROOT, "%.2f×", median(high)), String.format(Locale.ROOT, "%.2f×", high[0]),
                    String.format(Locale.ROOT, "%.2f×", median(all)), String.format(Locale.ROOT, "%.2f×", all[0]), noWorse + " of " + seeds.size()));
        }
        return "\n" + wrap("**Against " + KubernetesDefaultPlacer.WHOLE_WORKLOAD + "** (every job admitted whole, as Kueue admits a "
                + "workload): speed-up of high-priority and all jobs' mean JCT (median; least), and the seeds on which preemption "
                + "lost no more GPU-hours than it did.") + "\n\n"
                + markdown(List.of("policy", "high ×", "least", "all ×", "least", "lost ≤ whole"), rows);
    }

    /**
     * Per seed, how soon each policy that learns its table had it right, against the table the jobs truly run at: the
     * completed jobs after which every class's card ranking stayed right / every class's speed ratios stayed within
     * {@link Learning#TOLERANCE} (the median class's in brackets), or "–" when not by the end of the trace. Empty when
     * no policy learned.
     */
    static String learning(SortedMap<Long, List<Summary>> bySeed) {
        var seeds = List.copyOf(bySeed.keySet());
        var rows = new LinkedHashMap<String, List<String>>();
        var names = bySeed.get(seeds.getFirst()).stream().map(Summary::policy).toList();
        for (int p = 0; p < names.size(); p++) {
            if (!bySeed.get(seeds.getFirst()).get(p).learned().learned()) {
                continue;
            }
            var cells = new ArrayList<String>();
            for (var seed : seeds) {
                cells.add(learnedCell(bySeed.get(seed).get(p).learned()));
            }
            rows.put(names.get(p), cells);
        }
        if (rows.isEmpty()) {
            return "";
        }
        int tolerance = (int) Math.round(100 * Learning.TOLERANCE);
        return "\n" + wrap("**Learning**: completed jobs after which the learned table (as the policy reads it, priors included) "
                + "had, for every class and for good, its fastest card right (within " + tolerance + " % of the truly fastest) / its "
                + "cards ranked as the jobs truly run (cards within " + tolerance + " % of each other a tie) / every speed ratio between "
                + "two cards within " + tolerance + " % of the true one (the median class's, in brackets); \"–\": not by the end. "
                + "Then the classes right / ranked / within at the end, and the pods' reports the learner refused.") + "\n\n"
                + perSeed(seeds, "policy (fastest / ranked / within (median); at the end; refused)", rows);
    }

    static String learnedCell(Learning.Figures learned) {
        return String.format(Locale.ROOT, "%s / %s / %s (%s); %d / %d / %d of %d; %d of %d", since(learned.fastestFrom()),
                since(learned.rankedFrom()), since(learned.withinFrom()),
                since(learned.medianWithinFrom() > learned.completedJobs() ? -1 : learned.medianWithinFrom()), learned.fastestAtEnd(),
                learned.rankedAtEnd(), learned.withinAtEnd(), learned.classes(), learned.refused(), learned.accepted() + learned.refused());
    }

    private static String since(int completed) {
        return completed < 0 ? "–" : Integer.toString(completed);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static void row(Map<String, List<String>> rows, Map<String, double[]> highRatios, String policy, List<Long> seeds,
                            Function<Long, Summary> baselineOf,
                            ToDoubleFunction<Long> high, ToDoubleFunction<Long> all) {
        var cells = new ArrayList<String>();
        var ratios = new double[seeds.size()];
        for (int i = 0; i < seeds.size(); i++) {
            var seed = seeds.get(i);
            var baseline = baselineOf.apply(seed);
            ratios[i] = baseline.meanJctHigh() / high.applyAsDouble(seed);
            cells.add(speedUp(baseline.meanJctHigh(), high.applyAsDouble(seed)) + " / " + speedUp(baseline.meanJct(), all.applyAsDouble(seed)));
        }
        rows.put(policy, cells);
        highRatios.put(policy, ratios);
    }

    /** The policy, then its least, median and most speed-up over the seeds. */
    private static List<String> spread(String policy, double[] ratios) {
        var sorted = ratios.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return List.of(policy, String.format(Locale.ROOT, "%.2f×", sorted[0]), String.format(Locale.ROOT, "%.2f×", median(sorted)),
                String.format(Locale.ROOT, "%.2f×", sorted[n - 1]));
    }

    private static String speedUp(double baseline, double value) {
        return value > 0 ? String.format(Locale.ROOT, "%.2f×", baseline / value) : "–";
    }

    /**
     * Writes {@code <name>-jct.png} (mean JCT by priority, the ceiling as dashed lines), {@code <name>-p99.png} and
     * {@code <name>-quality.png} under {@code dir}; returns their names.
     */
    public static List<String> charts(String name, List<Summary> summaries, PlacementCeiling ceiling, Path dir) throws IOException {
        Files.createDirectories(dir);
        var charts = charts(name, summaries, ceiling);
        for (var chart : charts.entrySet()) {
            BitmapEncoder.saveBitmap(chart.getValue(), dir.resolve(chart.getKey()).toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        return List.copyOf(charts.keySet());
    }

    /** The charts by file name: one group of bars per policy, every group labelled with the policy's name. */
    static Map<String, CategoryChart> charts(String name, List<Summary> summaries, PlacementCeiling ceiling) {
        var policies = summaries.stream().map(Summary::policy).toList();
        var mean = chart(name + ": mean job completion time", "hours");
        mean.addSeries("high priority", policies, summaries.stream().map(Summary::meanJctHigh).toList());
        mean.addSeries("other jobs", policies, summaries.stream().map(Summary::meanJctOther).toList());
        mean.addSeries("all", policies, summaries.stream().map(Summary::meanJct).toList());
        var colours = mean.getStyler().getSeriesColors();
        // A line series takes a bar's slot in each group: those empty slots are the gaps between groups here.
        mean.getStyler().setAvailableSpaceFill(1.0);
        ceilingLine(mean, String.format(Locale.ROOT, "ceiling, high priority (%.2f h)", ceiling.meanJctHigh()), policies,
                ceiling.meanJctHigh(), colours[0]);
        ceilingLine(mean, String.format(Locale.ROOT, "ceiling, all (%.2f h)", ceiling.meanJct()), policies, ceiling.meanJct(), colours[2]);
        var p99 = chart(name + ": 99th percentile job completion time", "hours");
        p99.addSeries("high priority", policies, summaries.stream().map(Summary::p99JctHigh).toList());
        p99.addSeries("other jobs", policies, summaries.stream().map(Summary::p99JctOther).toList());
        var shares = chart(name + ": placement quality", "%");
        shares.addSeries("GPU utilisation", policies, summaries.stream().map(s -> 100 * s.gpuUtilisation()).toList());
        shares.addSeries("high GPU-h on top tier", policies, summaries.stream().map(s -> 100 * s.highOnTopTier()).toList());
        shares.addSeries("multi-GPU jobs on NVLink", policies, summaries.stream().map(s -> 100 * s.multiGpuOnNvlink()).toList());
        var charts = new LinkedHashMap<String, CategoryChart>();
        charts.put(name + "-jct.png", mean);
        charts.put(name + "-p99.png", p99);
        charts.put(name + "-quality.png", shares);
        return charts;
    }

    private static void ceilingLine(CategoryChart chart, String label, List<String> policies, double value, Color colour) {
        var line = chart.addSeries(label, policies, policies.stream().map(policy -> value).toList());
        line.setChartCategorySeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
        line.setLineStyle(SeriesLines.DASH_DASH);
        line.setLineColor(colour);
        line.setMarker(SeriesMarkers.NONE);
    }

    private static CategoryChart chart(String title, String unit) {
        var chart = new CategoryChartBuilder().width(1400).height(700).title(title).yAxisTitle(unit).build();
        var styler = chart.getStyler();
        // Rotated labels end at their tick (right-aligned, tops level under the axis) and so stay inside the picture;
        // centred, the last long policy name ran past the edge and XChart dropped it.
        styler.setXAxisLabelRotation(45);
        styler.setXAxisLabelAlignment(AxesChartStyler.TextAlignment.Right);
        styler.setXAxisLabelAlignmentVertical(AxesChartStyler.TextAlignment.Right);
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Horizontal);
        styler.setAvailableSpaceFill(0.85);
        styler.setYAxisDecimalPattern("#0.0");
        styler.setLabelsVisible(true);
        // Each value inside the top of its bar, dark or light against the bar's colour.
        styler.setLabelsPosition(1.0);
        styler.setLabelsFontColorAutomaticEnabled(true);
        styler.setLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 9));
        return chart;
    }
}
