package io.hetgpu.simulator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/** The report: a Markdown table per workload and PNG bar charts made with XChart. */
public final class Report {

    private Report() {
    }

    /** The figures of every policy; the first summary is the baseline the speed-up column compares with. */
    public static String table(List<Summary> summaries) {
        var baseline = summaries.getFirst();
        var text = new StringBuilder();
        text.append("| policy | jobs | mean JCT high (h) | high vs " + baseline.policy() + " | p99 JCT high (h) | mean JCT other (h) "
                + "| p99 JCT other (h) | mean JCT all (h) | all vs " + baseline.policy() + " | makespan (h) | mean queueing (h) | GPU util "
                + "| high GPU-h on top tier | multi-GPU on NVLink | cross-rack ps/worker traffic (TB) |\n");
        text.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (var s : summaries) {
            text.append(String.format(Locale.ROOT, "| %s | %d%s | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %s | %.1f | %.2f | %.1f %% | %.1f %% | %.1f %% | %.2f |%n",
                    s.policy(), s.jobs(), s.neverPlaced() == 0 ? "" : " (+" + s.neverPlaced() + " never placed)",
                    s.meanJctHigh(), speedUp(baseline.meanJctHigh(), s.meanJctHigh()), s.p99JctHigh(), s.meanJctOther(), s.p99JctOther(),
                    s.meanJct(), speedUp(baseline.meanJct(), s.meanJct()), s.makespan(), s.meanQueueing(),
                    100 * s.gpuUtilisation(), 100 * s.highOnTopTier(), 100 * s.multiGpuOnNvlink(), s.crossRackTb()));
        }
        return text.toString();
    }

    /** What the ceiling says about the same trace: how far any scheduler could get past the baseline. */
    public static String ceiling(PlacementCeiling ceiling, Summary baseline) {
        return String.format(Locale.ROOT, """
                **Ceiling** (every job started on arrival on its fastest cards and layout; no scheduler, preemptive or \
                not, does better): mean JCT high %.2f h (at most %s against %s), other %.2f h, all %.2f h (at most %s). \
                Offered load at those speeds: %.2f of the cluster's GPU-hours between the first and last arrival%s.%s
                """, ceiling.meanJctHigh(), speedUp(baseline.meanJctHigh(), ceiling.meanJctHigh()), baseline.policy(),
                ceiling.meanJctRest(), ceiling.meanJct(), speedUp(baseline.meanJct(), ceiling.meanJct()), ceiling.offeredLoad(),
                ceiling.offeredLoad() > 1 ? " (above 1: no scheduler keeps up; completion times grow with the trace's length)" : "",
                ceiling.unplaceable() == 0 ? "" : " " + ceiling.unplaceable() + " jobs fit no node and are left out.");
    }

    /**
     * Each policy's speed-up over the baseline (the first summary of each seed), high priority / all jobs,
     * one column per seed, then the least, median and most high-priority speed-up; the ceiling last.
     */
    public static String seedTable(SortedMap<Long, List<Summary>> bySeed, Map<Long, PlacementCeiling> ceilings) {
        var seeds = List.copyOf(bySeed.keySet());
        var text = new StringBuilder("| policy (high × / all ×) |");
        seeds.forEach(seed -> text.append(" seed ").append(seed).append(" |"));
        text.append(" least high × | median | most |\n|---|");
        text.append("---:|".repeat(seeds.size() + 3)).append('\n');
        var policies = bySeed.get(seeds.getFirst()).stream().skip(1).map(Summary::policy).toList();
        for (int p = 0; p < policies.size(); p++) {
            var ratios = new double[seeds.size()];
            text.append("| ").append(policies.get(p)).append(" |");
            for (int i = 0; i < seeds.size(); i++) {
                var summaries = bySeed.get(seeds.get(i));
                var baseline = summaries.getFirst();
                var summary = summaries.get(p + 1);
                ratios[i] = baseline.meanJctHigh() / summary.meanJctHigh();
                text.append(' ').append(speedUp(baseline.meanJctHigh(), summary.meanJctHigh())).append(" / ")
                        .append(speedUp(baseline.meanJct(), summary.meanJct())).append(" |");
            }
            appendSpread(text, ratios);
        }
        var ratios = new double[seeds.size()];
        text.append("| ceiling (any scheduler) |");
        for (int i = 0; i < seeds.size(); i++) {
            var baseline = bySeed.get(seeds.get(i)).getFirst();
            var ceiling = ceilings.get(seeds.get(i));
            ratios[i] = baseline.meanJctHigh() / ceiling.meanJctHigh();
            text.append(' ').append(speedUp(baseline.meanJctHigh(), ceiling.meanJctHigh())).append(" / ")
                    .append(speedUp(baseline.meanJct(), ceiling.meanJct())).append(" |");
        }
        appendSpread(text, ratios);
        return text.toString();
    }

    private static void appendSpread(StringBuilder text, double[] ratios) {
        var sorted = ratios.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        text.append(String.format(Locale.ROOT, " %.2f× | %.2f× | %.2f× |%n", sorted[0], median, sorted[n - 1]));
    }

    private static String speedUp(double baseline, double value) {
        return value > 0 ? String.format(Locale.ROOT, "%.2f×", baseline / value) : "–";
    }

    /** Writes {@code <name>-jct.png} (mean JCT by priority) and {@code <name>-p99.png} under {@code dir}; returns their names. */
    public static List<String> charts(String name, List<Summary> summaries, Path dir) throws IOException {
        Files.createDirectories(dir);
        var policies = summaries.stream().map(Summary::policy).toList();
        var mean = chart(name + ": mean job completion time", "hours");
        mean.addSeries("high priority", policies, summaries.stream().map(Summary::meanJctHigh).toList());
        mean.addSeries("other jobs", policies, summaries.stream().map(Summary::meanJctOther).toList());
        mean.addSeries("all", policies, summaries.stream().map(Summary::meanJct).toList());
        var p99 = chart(name + ": 99th percentile job completion time", "hours");
        p99.addSeries("high priority", policies, summaries.stream().map(Summary::p99JctHigh).toList());
        p99.addSeries("other jobs", policies, summaries.stream().map(Summary::p99JctOther).toList());
        var shares = chart(name + ": placement quality", "%");
        shares.addSeries("GPU utilisation", policies, summaries.stream().map(s -> 100 * s.gpuUtilisation()).toList());
        shares.addSeries("high GPU-h on top tier", policies, summaries.stream().map(s -> 100 * s.highOnTopTier()).toList());
        shares.addSeries("multi-GPU jobs on NVLink", policies, summaries.stream().map(s -> 100 * s.multiGpuOnNvlink()).toList());
        var files = List.of(name + "-jct.png", name + "-p99.png", name + "-quality.png");
        BitmapEncoder.saveBitmap(mean, dir.resolve(files.get(0)).toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(p99, dir.resolve(files.get(1)).toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(shares, dir.resolve(files.get(2)).toString(), BitmapEncoder.BitmapFormat.PNG);
        return files;
    }

    private static CategoryChart chart(String title, String unit) {
        var chart = new CategoryChartBuilder().width(1100).height(500).title(title).yAxisTitle(unit).build();
        chart.getStyler().setXAxisLabelRotation(30);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        return chart;
    }
}
