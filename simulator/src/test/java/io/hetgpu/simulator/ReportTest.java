package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategorySeries;
import picocli.CommandLine;

/** The report a reader opens: charts with a label on every group, tables that fit a terminal, and ablations that say when they did nothing. */
class ReportTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    /** The Gavel experiment as {@code ./hetgpu simulate} builds it, with few jobs. */
    private static Experiment gavel(int jobs) {
        var main = new SimulatorMain();
        new CommandLine(main).parseArgs("--jobs", Integer.toString(jobs));
        return main.experiment(1);
    }

    private static List<String> policyNames() {
        return gavel(10).placers(1).stream().map(Placer::name).toList();
    }

    /** Figures wide enough to stress every column: four-digit hours, a never-placed count. */
    private static List<Summary> summaries(List<String> policies) {
        return IntStream.range(0, policies.size()).mapToObj(i -> new Summary(policies.get(i), 10_000, 1234.56 + i, 9876.54, 1234.56, 9876.54,
                1234.56 + 2 * i, 12_345.6, 1234.56, 0.999, 0.999, 1.0, 12_345.67, policies.get(i).equals("hetgpu") ? 123 : 0, 12_345, 12_345.67, 1234.56, 1234.56,
                new TreeMap<>(Map.of(1, 12.34, 2, 123.45, 4, 1234.56, 8, 12_345.67)),
                new TreeMap<>(Map.of(1, 15.67 + i, 2, 16.5, 4, 17.25, 8, 1234.5)),
                new Summary.HalfPlacedJobs(10_000 - i, 9_999 - i, 123_456.7, 1234.56))).toList();
    }

    @Test
    void theLearningFiguresArePerSeedForThePoliciesThatLearnAndAbsentOtherwise() {
        var plain = summaries(List.of("kubernetes-default", "hetgpu"));
        var learned = List.of(plain.get(0), plain.get(1).withLearned(new Learning.Figures(3000, 3500, 120, 26, 26, 20, 7, 1400, -1, -1, 2900)));
        var bySeed = new java.util.TreeMap<Long, List<Summary>>(Map.of(1L, learned, 2L, learned));

        assertThat(Report.learning(new java.util.TreeMap<>(Map.of(1L, plain)))).isEmpty();
        var text = Report.learning(bySeed);
        assertThat(text).contains("| hetgpu ").doesNotContain("| kubernetes-default ").contains("seed 1").contains("seed 2");
        assertThat(Report.learnedCell(learned.get(1).learned())).isEqualTo("1400 / – / – (2900); 26 / 20 / 7 of 26; 120 of 3620");
    }

    @Test
    void everyChartHasOneLabelledGroupPerPolicyRun() throws Exception {
        var policies = policyNames();
        var charts = Report.charts("gavel", summaries(policies), new PlacementCeiling(15.26, 15.6, 15.53, 0.73, 0));

        assertThat(charts.keySet()).containsExactly("gavel-jct.png", "gavel-p99.png", "gavel-quality.png");
        for (var chart : charts.values()) {
            for (var series : chart.getSeriesCollection()) {
                assertThat(List.<Object>copyOf(series.getXData())).as(series.getName()).containsExactlyElementsOf(policies);
            }
            assertThat(chart.getStyler().isLabelsVisible()).isTrue();
            assertThat(BitmapEncoder.getBufferedImage(chart).getWidth()).isPositive();
        }
        var mean = charts.get("gavel-jct.png");
        assertThat(mean.getSeriesCollection()).filteredOn(series -> series.getChartCategorySeriesRenderStyle().equals(Optional.of(CategorySeries.CategorySeriesRenderStyle.Line)))
                .extracting(series -> series.getName())
                .containsExactly("ceiling, high priority (15.26 h)", "ceiling, all (15.53 h)");
        assertThat(mean.getSeries("ceiling, all (15.53 h)").getYData()).containsOnly(15.53);
    }

    @Test
    void everyLineOfTheReportFitsOneHundredColumns() {
        var summaries = summaries(policyNames());
        var ceiling = new PlacementCeiling(15.26, 15.6, 15.53, 1.73, 12, new TreeMap<>(Map.of(1, 15.1, 2, 15.2, 4, 15.3, 8, 18.7)));
        var report = Report.table(summaries) + Report.highBySize(summaries, ceiling) + Report.ceiling(ceiling, summaries.getFirst());

        assertThat(report.lines()).allSatisfy(line -> assertThat(line.length()).as(line).isLessThanOrEqualTo(Report.COLUMNS));
        // Every figure of the old 15-column table is still there, each policy in each of the five tables, and in the
        // two breakdowns by job size.
        assertThat(report.lines().filter(line -> line.startsWith("| hetgpu-workload-aware-min0.3-reserve10 "))).hasSize(8);
        assertThat(report).contains("| policy                                 | 1 GPU | 2 GPUs |  4 GPUs |   8 GPUs |");
        assertThat(report).contains("| hetgpu                                 | 10000 |", "hetgpu: 123 jobs never started");
        // What jobs spent half-placed, for every policy.
        assertThat(report).contains("| kubernetes-default                     |       10000 |       9999 |     123457 |   1234.56 |");
        // High priority by size, each policy and the ceiling's own figures for the same jobs.
        assertThat(report).contains("| kubernetes-default                     | 15.67 |  16.50 |  17.25 | 1234.50 |",
                "| ceiling                                | 15.10 |  15.20 |  15.30 |   18.70 |");
    }

    @Test
    void halfPlacedJobsBeyondTheDeadlineAreThoseWhosePodsHeldGpusLongerThanAPlanHoldsThem() {
        double deadlineHours = Summary.HalfPlacedJobs.DEADLINE_SECONDS / 3600;
        var spent = List.of(JobRun.HalfPlaced.NONE,
                // Only its parameter server placed for two hours: half-placed, holding no GPU.
                new JobRun.HalfPlaced(0, 2, 0),
                new JobRun.HalfPlaced(0.5, deadlineHours / 2, deadlineHours / 2),
                new JobRun.HalfPlaced(12, 3, 3),
                new JobRun.HalfPlaced(40, 10, 9.5));

        var figures = Summary.HalfPlacedJobs.of(spent);

        assertThat(figures).isEqualTo(new Summary.HalfPlacedJobs(4, 2, 52.5, 9.5));
    }

    @Test
    void theCeilingBreaksHighPriorityJobsDownBySize() {
        var experiment = gavel(400);
        var ceiling = PlacementCeiling.of(experiment.jobs(), experiment.inventory(), experiment.speed());
        var high = experiment.jobs().stream().filter(Job::high).toList();

        assertThat(ceiling.highByGpus().keySet()).containsExactlyElementsOf(high.stream().map(Job::gpus).distinct().sorted().toList());
        // The sizes' means, weighted by their job counts, are the high-priority mean.
        double weighted = ceiling.highByGpus().entrySet().stream()
                .mapToDouble(size -> size.getValue() * high.stream().filter(job -> job.gpus() == size.getKey()).count()).sum();
        assertThat(weighted / high.size()).isCloseTo(ceiling.meanJctHigh(), org.assertj.core.api.Assertions.within(1e-9));
    }

    @Test
    void anAblationThatChangesNothingOnATraceSaysSo() {
        // The Gavel cluster has no CPU-only node, so turning the CPU-node scorer off cannot move any pod.
        var summaries = gavel(60).run(1, name -> name.equals("hetgpu") || name.equals("hetgpu-no-cpu") || name.equals("hetgpu-no-tier"));

        var table = Report.table(summaries);

        assertThat(Report.sameAsEarlier(summaries)).containsEntry("hetgpu-no-cpu", "hetgpu").doesNotContainKey("hetgpu-no-tier");
        assertThat(table).contains("- hetgpu-no-cpu is identical to hetgpu in every figure");
        assertThat(table).doesNotContain("hetgpu-no-tier is identical");
    }

    @Test
    void helpNamesEveryPolicyThatPoliciesMatches() {
        var help = new CommandLine(new SimulatorMain()).getUsageMessage();

        for (var policy : policyNames()) {
            assertThat(help).as(policy).containsPattern("(?<![\\w-])" + java.util.regex.Pattern.quote(policy) + "(?![\\w-])");
        }
    }

    @Test
    void wrappingBreaksBetweenWordsAndIndentsContinuations() {
        var text = "word ".repeat(60).strip();

        var wrapped = Report.wrap("- " + text, "  ");

        assertThat(wrapped.lines()).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(Report.COLUMNS));
        assertThat(wrapped.lines().skip(1)).allSatisfy(line -> assertThat(line).startsWith("  word"));
        assertThat(wrapped.replace("\n  ", " ")).isEqualTo("- " + text);
    }
}
