package io.hetgpu.simulator;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.Observation;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.ToDoubleFunction;

/**
 * A scheduler that learns as the extender does: the extender's own {@link ThroughputLearner}, fed what the cluster
 * shows when a job's pods end (their cards, run time and the work the job reports, {@link WorkReporting}), and read by
 * the policy through the extender's own {@link ThroughputSource} merged with the configured table. The only mutable
 * state besides the learner is how far the learned table has come (for the report), never read by the policy.
 *
 * <p>How far it has come is measured against an oracle: the table the workload really runs at (Gavel's 1-GPU
 * throughputs), which only this measurement reads. A class is <em>ranked</em> when every two cards the oracle tells
 * apart by more than the tolerance are in the oracle's order in the table the policy reads; its <em>fastest</em> is right
 * when the card the table ranks first for it runs within the tolerance of its truly fastest card; it is <em>within</em>
 * when, for every two cards, the table's speed ratio is within the tolerance of the oracle's. The figures say after how
 * many completed jobs each held for good (to the end of the trace).
 */
public final class Learning {

    /** The tolerance of "within": 10 %. */
    static final double TOLERANCE = 0.10;

    /**
     * What a run learns with.
     *
     * @param settings          the learner's bounds (its {@code enabled} turns learning on)
     * @param reporting         how jobs report their work
     * @param stepsPerRefSecond a job's work unit: its steps per second on its reference card at its GPU count
     * @param oracle            the speeds the jobs truly run at, for the report's convergence figures only
     * @param minimumShare      the policy's minimumSpeedShare over the learned table ({@code --minimum-speed-share}); NaN:
     *                          the extender configuration's
     */
    public record Setup(LearningSettings settings, WorkReporting reporting, ToDoubleFunction<Job> stepsPerRefSecond, WorkloadThroughputs oracle,
                 double minimumShare) {

        /** Nothing is learned (a trace whose jobs have no class, such as Alibaba's). */
        public static final Setup OFF = new Setup(LearningSettings.OFF, WorkReporting.DEFAULTS, job -> 0, WorkloadThroughputs.NONE, Double.NaN);

        /** Gavel's jobs: steps at Gavel's measured throughputs, the oracle its 1-GPU table. */
        static Setup gavel(LearningSettings settings, WorkReporting reporting, GavelThroughputs throughputs, String reference) {
            return new Setup(settings, reporting, job -> throughputs.stepsPerSecond(job.type(), job.gpus(), reference),
                    throughputs.asWorkloadTable(), Double.NaN);
        }

        Setup withMinimumShare(double share) {
            return new Setup(settings, reporting, stepsPerRefSecond, oracle, share);
        }

        boolean enabled() {
            return settings.enabled();
        }
    }

    /**
     * What one run learned.
     *
     * @param completedJobs jobs completed in the trace
     * @param accepted      samples the learner kept
     * @param refused       samples it refused (not measurements, or outliers)
     * @param classes       classes of the oracle
     * @param rankedAtEnd   classes ranked at the end of the trace
     * @param withinAtEnd   classes within the tolerance at the end
     * @param fastestAtEnd  classes whose fastest card is right at the end
     * @param fastestFrom   completed jobs after which every class's fastest card stayed right; -1 if not by the end
     * @param rankedFrom    completed jobs after which every class stayed ranked; -1 if not by the end
     * @param withinFrom    completed jobs after which every class stayed within the tolerance; -1 if not by the end
     * @param medianWithinFrom the median class's own such count (a class never within counts as the trace's length + 1)
     */
    public record Figures(int completedJobs, int accepted, int refused, int classes, int fastestAtEnd, int rankedAtEnd, int withinAtEnd,
                          int fastestFrom, int rankedFrom, int withinFrom, int medianWithinFrom) {

        public static final Figures NONE = new Figures(0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1);

        boolean learned() {
            return classes > 0;
        }
    }

    private final Setup setup;
    private final ThroughputLearner learner;
    private final ThroughputSource source;
    private final Random reports;
    private final List<String> classes;
    /** Per oracle class: completed jobs since which it has been ranked / within, -1 while it is not. */
    private final int[] fastestSince;
    private final int[] rankedSince;
    private final int[] withinSince;
    private int completed;
    private int accepted;
    private int refused;
    private long judgedVersion = -1;

    /**
     * @param configured the admin's table the learned one is merged under (configured rows win)
     * @param seed       the trace's seed: the reports' noise is drawn from it
     */
    Learning(Setup setup, WorkloadThroughputs configured, long seed) {
        this.setup = setup;
        this.learner = new ThroughputLearner(setup.settings());
        this.source = ThroughputSource.learning(learner, configured);
        this.reports = new Random(seed * 31 + 7);
        this.classes = List.copyOf(setup.oracle().table().keySet());
        this.fastestSince = new int[classes.size()];
        this.rankedSince = new int[classes.size()];
        this.withinSince = new int[classes.size()];
        Arrays.fill(fastestSince, -1);
        Arrays.fill(rankedSince, -1);
        Arrays.fill(withinSince, -1);
    }

    ThroughputSource source() {
        return source;
    }

    ThroughputLearner learner() {
        return learner;
    }

    /** Feeds the run's samples to the learner; true when the table the policy reads changed. */
    boolean observe(EndedRun run) {
        long before = learner.table().version();
        if (!run.job().type().isEmpty()) {
            for (var sample : setup.reporting().samples(run, setup.stepsPerRefSecond().applyAsDouble(run.job()), reports)) {
                if (learner.observe(sample) instanceof Observation.Accepted) {
                    accepted++;
                } else {
                    refused++;
                }
            }
        }
        if (!run.evicted()) {
            completed++;
            judge();
        }
        return learner.table().version() != before;
    }

    /** After a completed job: which classes are ranked and within now (the table is judged again only when it changed). */
    private void judge() {
        var table = source.current();
        if (table.version() == judgedVersion) {
            return;
        }
        judgedVersion = table.version();
        for (int c = 0; c < classes.size(); c++) {
            var truth = setup.oracle().table().get(classes.get(c));
            var learned = table.table().table().get(classes.get(c));
            fastestSince[c] = fastestRight(learned, truth) ? (fastestSince[c] < 0 ? completed : fastestSince[c]) : -1;
            rankedSince[c] = ranked(learned, truth) ? (rankedSince[c] < 0 ? completed : rankedSince[c]) : -1;
            withinSince[c] = within(learned, truth, TOLERANCE) ? (withinSince[c] < 0 ? completed : withinSince[c]) : -1;
        }
    }

    Figures figures() {
        int fastest = (int) Arrays.stream(fastestSince).filter(since -> since >= 0).count();
        int ranked = (int) Arrays.stream(rankedSince).filter(since -> since >= 0).count();
        int within = (int) Arrays.stream(withinSince).filter(since -> since >= 0).count();
        var perClass = Arrays.stream(withinSince).map(since -> since >= 0 ? since : completed + 1).sorted().toArray();
        return new Figures(completed, accepted, refused, classes.size(), fastest, ranked, within,
                fastest == classes.size() && fastest > 0 ? Arrays.stream(fastestSince).max().orElse(-1) : -1,
                ranked == classes.size() && ranked > 0 ? Arrays.stream(rankedSince).max().orElse(-1) : -1,
                within == classes.size() && within > 0 ? Arrays.stream(withinSince).max().orElse(-1) : -1,
                perClass.length == 0 ? -1 : perClass[(perClass.length - 1) / 2]);
    }

    /** The card {@code learned} ranks first (of the oracle's cards) runs within the tolerance of the truly fastest. */
    static boolean fastestRight(Map<String, Double> learned, Map<String, Double> truth) {
        if (learned == null || !learned.keySet().containsAll(truth.keySet())) {
            return false;
        }
        var first = truth.keySet().stream().max(java.util.Comparator.comparingDouble(learned::get)).orElseThrow();
        double best = truth.values().stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        return truth.get(first) * (1 + TOLERANCE) >= best;
    }

    /** Every two cards the oracle tells apart by more than the tolerance are in its order in {@code learned}. */
    static boolean ranked(Map<String, Double> learned, Map<String, Double> truth) {
        if (learned == null || !learned.keySet().containsAll(truth.keySet())) {
            return false;
        }
        for (var a : truth.keySet()) {
            for (var b : truth.keySet()) {
                if (truth.get(a) > truth.get(b) * (1 + TOLERANCE) && !(learned.get(a) > learned.get(b))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** For every two cards, the speed ratio in {@code learned} is within {@code tolerance} of the oracle's. */
    static boolean within(Map<String, Double> learned, Map<String, Double> truth, double tolerance) {
        if (learned == null || !learned.keySet().containsAll(truth.keySet())) {
            return false;
        }
        for (var a : truth.keySet()) {
            for (var b : truth.keySet()) {
                double ratio = (learned.get(a) / learned.get(b)) / (truth.get(a) / truth.get(b));
                if (!(Math.abs(ratio - 1) <= tolerance)) {
                    return false;
                }
            }
        }
        return true;
    }
}
