package io.hetgpu.simulator;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.EvictionFloor;
import io.hetgpu.extender.policy.JobHeadroom;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.gpu.cli.OneLineErrors;
import io.hetgpu.gpu.cli.OutputFolder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Runs one workload under every policy and writes the report. */
@Command(name = "hetgpu-simulator", mixinStandardHelpOptions = true,
        description = "Feeds a GPU cluster trace through the extender's placement policy and through Kubernetes' default, and reports job completion times.")
public final class SimulatorMain implements Callable<Integer> {

    enum WorkloadName { gavel, alibaba }

    /** What the jobs that are not high priority run as. */
    enum Others {
        low(Job.LOW_PRIORITY), normal(Job.NORMAL_PRIORITY);

        final int priority;

        Others(int priority) {
            this.priority = priority;
        }
    }

    @Option(names = "--workload", description = "gavel (synthetic, 36 K80 + 36 P100 + 36 V100) or alibaba (the v2023 trace on its own nodes); default ${DEFAULT-VALUE}")
    WorkloadName workload = WorkloadName.gavel;

    @Option(names = "--rate", description = "gavel: mean job arrivals per hour; default ${DEFAULT-VALUE}")
    double rate = 2.4;

    @Option(names = "--jobs", description = "gavel: jobs to generate; default ${DEFAULT-VALUE}")
    int jobs = 2000;

    @Option(names = "--reference", description = "gavel: the card a job's sampled duration is measured on (K80, P100, V100); default ${DEFAULT-VALUE}")
    String reference = "V100";

    @Option(names = "--others", description = "gavel: the 80 %% of jobs that are not high priority run as low (priority -1, the oldest cards that fit) "
            + "or normal (no PriorityClass, neutral); default ${DEFAULT-VALUE}")
    Others others = Others.low;

    @Option(names = "--config", paramLabel = "FILE", description = "an extender configuration file (version v1, as the ConfigMap's "
            + "extender.yaml): its policy (priority, weights, evictForFasterCards, jobHeadroom) for every hetgpu run, each run's "
            + "workload table and reserve its own; default the extender's built-in defaults, which manifests/ ships")
    Path config;

    private ExtenderConfig extenderConfig = ExtenderConfig.DEFAULTS;

    @Option(names = "--checkpoint-interval", paramLabel = "MINUTES", description = "an assumption: jobs save their work every this many "
            + "minutes of run time, and an evicted job resumes from its last checkpoint (0: never, it restarts from scratch); default ${DEFAULT-VALUE}")
    double checkpointMinutes = Checkpoints.DEFAULTS.intervalSeconds() / 60;

    @Option(names = "--restart-overhead", paramLabel = "MINUTES", description = "an assumption: an evicted job takes this long to start "
            + "making progress again once it runs (image, checkpoint load, warm-up); default ${DEFAULT-VALUE}")
    double restartMinutes = Checkpoints.DEFAULTS.restartOverheadSeconds() / 60;

    @Option(names = "--communication", paramLabel = "PCIE,RACK,CROSS", description = "an assumption: the speed factor of a "
            + "multi-GPU job on one node over PCIe, on several nodes of one rack, across racks (an NVLink set is 1); default ${DEFAULT-VALUE}")
    String communication = CommunicationModel.DEFAULTS.toString();

    @Option(names = "--evict-for-faster-cards", paramLabel = "SHARE", description = "the policy.evictForFasterCards of every hetgpu run "
            + "(0 off, up to 1): a high-priority pod refuses free cards below this share of the speed of cards preemption can free "
            + "for it; default the --config file's, else the extender's default")
    Double evictForFasterCards;

    @Option(names = "--job-headroom", paramLabel = "GPUS|PERCENT%", description = "the policy.jobHeadroom of every hetgpu run (0 off): a "
            + "job of several pods below high priority starts only where this many GPUs (8), or this share of the cluster's (10%), more "
            + "than it needs are free; default the --config file's, else the extender's default")
    String jobHeadroom;
    private JobHeadroom headroom;

    @Option(names = "--minimum-speed-share", description = "the policy.minimumSpeedShare of the workload-aware runs that use one "
            + "(default " + Experiment.SLOW_CARD_SHARE + "), and of the runs that learn their table (default the --config file's, else the "
            + "extender's)")
    Double share;

    @Option(names = "--learning", negatable = true, description = "the hetgpu runs without a given table learn one as the extender "
            + "does by default (policy.learning.enabled), their pods naming their Gavel job type in hetgpu.io/workload; "
            + "--no-learning: they do not, as before learning existed; default the --config file's policy.learning.enabled, "
            + "else on as the extender ships")
    Boolean learning;

    @Option(names = "--explore", negatable = true, description = "policy.learning.explore of the runs that learn: low-priority pods "
            + "try cards their class has not run on; default the --config file's, else on as the extender ships")
    Boolean explore;

    @Option(names = "--report-noise", paramLabel = "SIGMA", description = "an assumption: the sigma of the lognormal noise on the work "
            + "a job reports when its pods end; default ${DEFAULT-VALUE}")
    double reportNoise = WorkReporting.DEFAULTS.noiseSigma();

    @Option(names = "--bogus-reports", paramLabel = "SHARE", description = "an assumption: the share of pods' reports that are no "
            + "measurement (half from pods that crashed within a minute, half ten times inflated); default ${DEFAULT-VALUE}")
    double bogusReports = WorkReporting.DEFAULTS.bogusShare();

    @Option(names = "--high-priority-reserve", description = "the policy.highPriorityReserve (top-tier GPUs) of the last workload-aware run; default ${DEFAULT-VALUE}")
    int reserve = Experiment.RESERVE;

    // One name a line: picocli breaks an over-long word at its dots (hetgpu-workload-aware-min0. / 35).
    @Option(names = "--policies", paramLabel = "REGEX", description = {
            "a regular expression over the policy names: simulate only the policies it matches (the three kubernetes-default runs, "
                    + "the baselines, always run); default all. The names (the last three with --workload gavel; their numbers are "
                    + "--minimum-speed-share and --high-priority-reserve):",
            "  kubernetes-default (pod by pod, with DefaultPreemption)", "  kubernetes-default-whole-workload (jobs admitted whole)",
            "  kubernetes-default-no-preemption (jobs admitted whole)",
            "  kubernetes-dra-first-fit (DRA, 1.35+: plain claims, first fit)", "  kubernetes-dra-hetgpu-claims (DRA: hetgpu's claim templates)",
            "  kubernetes-dra-first-fit-preempt", "  kubernetes-dra-hetgpu-claims-preempt (the two with DRAPreemption)", "  hetgpu", "  hetgpu-no-tier", "  hetgpu-no-nvlink", "  hetgpu-no-job", "  hetgpu-no-data",
            "  hetgpu-no-cpu", "  hetgpu-no-packing", "  hetgpu-workload-aware", "  hetgpu-workload-aware-min0.3", "  hetgpu-workload-aware-min0.3-reserve10"},
            converter = PolicyNamePattern.class)
    Pattern policies = Pattern.compile(".*");

    @Option(names = "--seed", description = "seed of the generator and of kube-scheduler's tie-breaks; default ${DEFAULT-VALUE}")
    long seed = 1;

    @Option(names = "--seeds", paramLabel = "FROM..TO", description = "run every seed in the range (e.g. 1..10) and report each policy's "
            + "speed-ups per seed instead of one run's full table")
    String seeds;

    @Option(names = "--out", description = "report folder; default ${DEFAULT-VALUE}")
    Path out = Path.of("target/sim-report");

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(commandLine().execute(args));
    }

    /** The command line with hetgpu's error handling, as the device plugin and the extender have it: one line, no usage dump. */
    static CommandLine commandLine() {
        return OneLineErrors.install(new CommandLine(new SimulatorMain()), "hetgpu-simulator");
    }

    @Override
    public Integer call() throws Exception {
        if (jobs < 1) {
            throw new ParameterException(spec.commandLine(), "--jobs: expected at least 1, got " + jobs);
        }
        if (share != null && !(share >= 0 && share < 1)) {
            throw new ParameterException(spec.commandLine(), "--minimum-speed-share: expected at least 0 and below 1, got " + share);
        }
        if (!(reportNoise >= 0 && reportNoise <= 1)) {
            throw new ParameterException(spec.commandLine(), "--report-noise: expected a sigma from 0 to 1, got " + reportNoise);
        }
        if (!(bogusReports >= 0 && bogusReports <= 1)) {
            throw new ParameterException(spec.commandLine(), "--bogus-reports: expected a share from 0 to 1, got " + bogusReports);
        }
        if (reserve < 0) {
            throw new ParameterException(spec.commandLine(), "--high-priority-reserve: expected 0 or more GPUs, got " + reserve);
        }
        if (jobHeadroom != null) {
            try {
                headroom = JobHeadroom.parse(jobHeadroom);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--" + e.getMessage().replace("jobHeadroom", "job-headroom"));
            }
        }
        reportFolder();
        long[] range;
        Experiment experiment;
        try {
            if (config != null) {
                extenderConfig = ExtenderConfig.load(config);
            }
            range = seeds == null ? null : range(seeds);
            experiment = experiment(range == null ? seed : range[0]);
        } catch (ExtenderConfig.ConfigException e) {
            throw new ParameterException(spec.commandLine(), "--config: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        if (range != null) {
            return seedRun(experiment, range);
        }
        long started = System.nanoTime();
        var summaries = experiment.run(seed, name -> policies.matcher(name).matches());
        double seconds = (System.nanoTime() - started) / 1e9;
        var table = Report.table(summaries);
        var ceiling = PlacementCeiling.of(experiment.jobs(), experiment.inventory(), experiment.speed(), experiment.communication());
        var charts = Report.charts(experiment.name(), summaries, ceiling, out);
        var report = new StringBuilder("# " + experiment.name() + "\n\n");
        report.append(String.format(Locale.ROOT, "%d jobs on %d GPUs (%d nodes), seed %d; %d policies simulated in %.1f s.%n%n",
                experiment.jobs().size(), experiment.inventory().gpuCount(), experiment.inventory().nodes().size(), seed,
                summaries.size(), seconds));
        report.append(table).append('\n');
        var bySize = Report.highBySize(summaries, ceiling);
        if (!bySize.isEmpty()) {
            report.append(bySize).append('\n');
        }
        report.append(Report.ceiling(ceiling, summaries.getFirst()))
                .append('\n');
        var learned = Report.learning(new TreeMap<>(java.util.Map.of(seed, summaries)));
        if (!learned.isEmpty()) {
            report.append(learned.substring(1)).append('\n');
        }
        charts.forEach(chart -> report.append("![").append(chart).append("](").append(chart).append(")\n"));
        Files.writeString(out.resolve(experiment.name() + ".md"), report);
        System.out.print(report);
        System.out.println("\nreport: " + out.resolve(experiment.name() + ".md"));
        return 0;
    }

    /** Every seed of the range, one run each: the evidence for a claim that one chaotic run cannot carry. */
    private int seedRun(Experiment first, long[] range) throws IOException {
        var bySeed = new TreeMap<Long, List<Summary>>();
        var ceilings = new HashMap<Long, PlacementCeiling>();
        var steadyCeilings = new HashMap<Long, PlacementCeiling>();
        long started = System.nanoTime();
        for (long s = range[0]; s <= range[1]; s++) {
            // The Alibaba trace is the same for every seed (only kube-scheduler's tie-breaks differ): read it once.
            var experiment = s == range[0] || workload == WorkloadName.alibaba ? first : experiment(s);
            bySeed.put(s, experiment.run(s, name -> policies.matcher(name).matches()));
            ceilings.put(s, PlacementCeiling.of(experiment.jobs(), experiment.inventory(), experiment.speed()));
            if (experiment.jobs().size() >= Summary.STEADY_TO) {
                var window = experiment.jobs().stream().filter(job -> job.id() >= Summary.STEADY_FROM && job.id() < Summary.STEADY_TO).toList();
                steadyCeilings.put(s, PlacementCeiling.of(window, experiment.inventory(), experiment.speed()));
            }
            System.err.printf(Locale.ROOT, "seed %d done (%.0f s)%n", s, (System.nanoTime() - started) / 1e9);
        }
        var report = "# " + first.name() + ", seeds " + range[0] + ".." + range[1] + "\n\nSpeed-up of mean JCT over "
                + bySeed.firstEntry().getValue().getFirst().policy() + ", high priority / all jobs, one run per seed.\n\n"
                + Report.seedTable(bySeed, ceilings, steadyCeilings);
        Files.createDirectories(out);
        var file = out.resolve(first.name() + "-seeds-" + range[0] + "-" + range[1] + ".md");
        Files.writeString(file, report);
        System.out.print(report);
        System.out.println("\nreport: " + file);
        return 0;
    }

    /** "1..10" as {1, 10}. */
    static long[] range(String text) {
        var parts = text.split("\\.\\.", -1);
        try {
            if (parts.length == 2) {
                long from = Long.parseLong(parts[0].trim());
                long to = Long.parseLong(parts[1].trim());
                if (from <= to) {
                    return new long[] {from, to};
                }
            }
        } catch (NumberFormatException e) {
            // the message below says what is expected
        }
        throw new IllegalArgumentException("--seeds: expected FROM..TO with FROM <= TO, such as 1..10, got \"" + text + "\"");
    }

    Experiment experiment(long seed) {
        var settings = evictForFasterCards == null ? extenderConfig : extenderConfig.withEvictionFloor(new EvictionFloor(evictForFasterCards));
        settings = jobHeadroom == null ? settings : settings.withJobHeadroom(headroom);
        return workloadExperiment(seed).withConfig(settings).withCheckpoints(new Checkpoints(checkpointMinutes * 60, restartMinutes * 60))
                .withCommunication(CommunicationModel.parse(communication));
    }

    private Experiment workloadExperiment(long seed) {
        return switch (workload) {
            case gavel -> {
                var throughputs = GavelThroughputs.shipped();
                var inventory = ClusterInventory.gavel();
                var racks = inventory.nodes().stream().map(SimNode::rack).distinct().sorted().toList();
                yield new Experiment(String.format(Locale.ROOT, "gavel-rate%s-jobs%d-%s%s", trim(rate), jobs, reference.toLowerCase(Locale.ROOT),
                        others == Others.low ? "" : "-others-" + others), inventory,
                        GavelWorkload.generate(rate, jobs, seed, throughputs, racks, others.priority), CardSpeed.gavel(throughputs, reference),
                        throughputs.asWorkloadTable(), share == null ? Experiment.SLOW_CARD_SHARE : share, reserve)
                        .withLearning(learningSetup(throughputs));
            }
            case alibaba -> AlibabaTrace.experiment();
        };
    }

    /** What the runs that learn learn with: Gavel's jobs report the steps they ran, with noise and bogus reports. */
    private Learning.Setup learningSetup(GavelThroughputs throughputs) {
        var settings = extenderConfig.learning();
        if (learning != null) {
            settings = settings.withEnabled(learning);
        }
        if (explore != null && explore != settings.explore()) {
            settings = new LearningSettings(settings.enabled(), settings.minRunSeconds(), settings.windowSize(), settings.maxNamespaces(),
                    settings.maxClasses(), settings.outlierFactor(), settings.outlierMinSamples(), settings.maxNamespaceInfluence(), explore);
        }
        var setup = Learning.Setup.gavel(settings, new WorkReporting(reportNoise, bogusReports), throughputs, reference);
        return share == null ? setup : setup.withMinimumShare(share);
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    /** The report folder, made before the runs: a folder that cannot be written is said before minutes of simulation, not after. */
    private void reportFolder() {
        OutputFolder.problem(out).ifPresent(problem -> {
            throw new ParameterException(spec.commandLine(), "--out: " + problem);
        });
    }

    /** {@code --policies}: a regular expression, its error in one line (Java's own message draws a caret on lines of its own). */
    static final class PolicyNamePattern implements CommandLine.ITypeConverter<Pattern> {
        @Override
        public Pattern convert(String value) {
            try {
                return Pattern.compile(value);
            } catch (PatternSyntaxException e) {
                throw new CommandLine.TypeConversionException("expected a regular expression over the policy names, got \""
                        + value + "\" (" + e.getDescription() + (e.getIndex() >= 0 ? " at index " + e.getIndex() : "") + ")");
            }
        }
    }
}
