package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The learned state made to fit the ConfigMap: what a restart reads back is the figures the extender had. */
class StateFitTest {

    /** The ConfigMap's budget for the data (LearnedThroughputsConfigMap.MAX_DATA_CHARS). */
    private static final int CONFIG_MAP = 900 * 1024;
    private static final Instant END = Instant.parse("2026-11-28T04:00:00Z");

    @Test
    void aStateThatFitsIsWrittenWhole() {
        var state = state(window("team-a", 1, 10.123456789, 11.0));
        var fitted = StateFit.fit(state, CONFIG_MAP, LearningSettings.DEFAULTS);
        assertThat(fitted.how()).isEqualTo("whole");
        assertThat(fitted.json()).isEqualTo(LearnedStateCodec.toJson(state));
    }

    @Test
    void figuresAreRoundedToFourDigitsAndWrittenShort() {
        assertThat(StateFit.round(412.53781)).isEqualTo(412.5);
        assertThat(Double.toString(StateFit.round(0.000123456))).isEqualTo("1.235E-4");
        assertThat(StateFit.round(123456789.0)).isEqualTo(1.235e8);
        assertThat(StateFit.round(9.99961)).isEqualTo(10.0);
        assertThat(StateFit.round(3.3e-30)).isEqualTo(3.3e-30);
        var random = new Random(3);
        for (int i = 0; i < 10_000; i++) {
            double value = Math.exp(40 * (random.nextDouble() - 0.5));
            var text = Double.toString(StateFit.round(value));
            assertThat(new java.math.BigDecimal(text).stripTrailingZeros().precision()).as(text).isLessThanOrEqualTo(StateFit.DIGITS);
            assertThat(StateFit.round(value) / value).isCloseTo(1, org.assertj.core.data.Offset.offset(5e-4));
        }
    }

    @Test
    void aSummaryKeepsTheWindowsMedianItsOrderInTimeAndTheRunsItStandsFor() {
        // Oldest first; sorted: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16, median sqrt(8 x 9).
        var window = new LearnedState.NamespaceSamples("team-a", List.of(16.0, 1.0, 9.0, 3.0, 14.0, 8.0, 5.0, 12.0, 2.0, 11.0,
                7.0, 15.0, 4.0, 13.0, 6.0, 10.0), 2);

        var three = StateFit.summarised(window, 3);
        assertThat(three.throughputsPerGpu()).as("the middle of each half, and the median in the place of the later middle one")
                .containsExactly(StateFit.round(Math.sqrt(72)), 5.0, 12.0);
        assertThat(three.runs()).isEqualTo(16);
        assertThat(three.gpus()).isEqualTo(2);
        var one = StateFit.summarised(window, 1);
        assertThat(one.throughputsPerGpu()).containsExactly(StateFit.round(Math.sqrt(72)));
        assertThat(StateFit.summarised(one, 1)).as("a summary summarised again is itself").isEqualTo(one);

        // Restored, the summary is a window of 16 runs with the live median.
        for (var summary : List.of(StateFit.summarised(window, 9), StateFit.summarised(window, 5), three, one)) {
            var restored = ThroughputLearner.expanded(summary.throughputsPerGpu(), summary.runs(), 16);
            assertThat(restored).hasSize(16);
            assertThat(ThroughputLearner.median(restored.stream().mapToDouble(Double::doubleValue).toArray()))
                    .isCloseTo(Math.sqrt(72), org.assertj.core.data.Percentage.withPercentage(0.05));
        }
        assertThat(ThroughputLearner.expanded(three.throughputsPerGpu(), 16, 8)).as("within the learner's window").hasSize(8);
    }

    @Test
    void cuttingNamespacesKeepsTheMiddleVotesAndSoTheFigure() {
        var namespaces = new ArrayList<LearnedState.NamespaceSamples>();
        double[] votes = {50, 10, 90, 30, 70, 20, 80, 40, 60};
        for (int i = 0; i < votes.length; i++) {
            namespaces.add(window("team-" + i, 1, votes[i]));
        }
        var cut = StateFit.middleVotes(state(namespaces.toArray(LearnedState.NamespaceSamples[]::new)), 4);
        assertThat(cut.classes().getFirst().cards().getFirst().namespaces()).extracting(LearnedState.NamespaceSamples::namespace)
                .as("the three middle votes, in their order").containsExactly("team-0", "team-7", "team-8");
    }

    @Test
    void aClassesOtherPodSizesGoWhereItsReferenceSizeHasTheCard() {
        var state = new LearnedState(List.of(new LearnedState.ClassSamples("bert", List.of(
                new LearnedState.CardSamples("V100", List.of(window("team-a", 1, 10), window("team-a", 5, 7))),
                new LearnedState.CardSamples("A100", List.of(window("team-a", 1, 25))),
                new LearnedState.CardSamples("H100", List.of(window("team-a", 5, 30)))))));
        var kept = StateFit.referenceSizes(state).classes().getFirst().cards();
        assertThat(kept.get(0).namespaces()).extracting(LearnedState.NamespaceSamples::gpus).containsExactly(1);
        assertThat(kept.get(2).namespaces()).as("the only figure on H100 stays").extracting(LearnedState.NamespaceSamples::gpus)
                .containsExactly(5);
    }

    /**
     * The learner at its default bounds, full: 64 classes, the 21 catalog cards, three pod sizes, 16 namespaces, windows of
     * 16: 1,032,192 samples, some 20 MB of JSON. Fitted into the ConfigMap and restored, every figure, prior and count
     * is the live one (figures to the 4 digits kept).
     */
    @Test
    void atTheLearnersBoundsTheRestoredFiguresAreTheLiveOnes() {
        var settings = LearningSettings.DEFAULTS;
        var state = fullState(settings, new Random(7));
        // The learner restores a whole state as it was (ThroughputLearnerTest.theStateSurvivesItsJson), faster than it
        // judges a million samples one by one.
        var learner = new ThroughputLearner(settings);
        learner.restore(state);
        var live = learner.table();
        assertThat(StateFit.leastChars(state)).isLessThanOrEqualTo(LearnedStateCodec.toJson(state).length());

        long start = System.nanoTime();
        var fitted = StateFit.fit(state, CONFIG_MAP, settings);
        long fitMillis = (System.nanoTime() - start) / 1_000_000;
        var restored = new ThroughputLearner(settings);
        restored.restore(LearnedStateCodec.fromJson(fitted.json()));

        var compared = compare(live, restored.table());
        System.out.printf(Locale.ROOT, "state at max bounds: %,d samples, %,d characters whole; fitted %,d characters in %d ms (%s);"
                        + " %d figures, worst relative error %.2e, runs kept %.2f to %.2f of the live counts%n", samples(state),
                LearnedStateCodec.toJson(state).length(), fitted.json().length(), fitMillis, fitted.how(), compared.figures(),
                compared.worstError(), compared.leastRunsKept(), compared.mostRunsKept());
        assertThat(fitted.json().length()).isLessThanOrEqualTo(CONFIG_MAP);
        assertThat(compared.figures()).as("every class and card, measured or prior").isEqualTo(64 * CardPriors.models().size());
        assertThat(compared.worstError()).as("figures as live, to the digits kept").isLessThan(1e-3);
        assertThat(compared.priorsAlike()).isTrue();
        assertThat(compared.leastRunsKept()).as("half the namespaces of a class and card stay, with their whole windows")
                .isGreaterThanOrEqualTo(0.5);
        assertThat(fitMillis).as("once a minute at most, off the request path").isLessThan(30_000);
    }

    @Test
    void evenTighterTheFiguresStayAndTheLeastRecentlySeenClassesGoLast() {
        var settings = LearningSettings.DEFAULTS;
        var learner = new ThroughputLearner(settings);
        var random = new Random(11);
        for (int c = 0; c < 6; c++) {
            for (int n = 0; n < 5; n++) {
                for (int i = 0; i < 16; i++) {
                    learner.observe(new WorkSample("class-" + c, "team-" + n, "V100", 1, 600, 600 * (100 + c) * Math.exp(0.1 * random.nextGaussian()), END));
                }
            }
        }
        var live = learner.table();
        var oneFigure = StateFit.fit(learner.state(), 800, settings);
        assertThat(oneFigure.how()).isEqualTo("each class and card kept as one figure");
        var restored = new ThroughputLearner(settings);
        restored.restore(LearnedStateCodec.fromJson(oneFigure.json()));
        assertThat(compare(live, restored.table()).worstError()).isLessThan(1e-3);

        var tight = StateFit.fit(learner.state(), 300, settings);
        assertThat(tight.json().length()).isLessThanOrEqualTo(300);
        var kept = LearnedStateCodec.fromJson(tight.json()).classes();
        assertThat(kept).isNotEmpty().hasSizeLessThan(6);
        assertThat(kept.getLast().workloadClass()).as("the most recently seen class stays").isEqualTo("class-5");
        assertThat(tight.how()).endsWith("the " + (6 - kept.size()) + " least recently seen classes dropped");
    }

    /**
     * The learner's state at its bounds, as it writes it. Realistic speeds: each class its own unit and card ratios,
     * slower per GPU in larger pods, namespaces a little apart, noisy runs and stragglers.
     */
    static LearnedState fullState(LearningSettings settings, Random random) {
        var cards = CardPriors.models().stream().sorted().toList();
        int classes = settings.maxClasses();
        int namespaces = settings.maxNamespaces();
        var base = new double[classes][cards.size()];
        for (int c = 0; c < classes; c++) {
            double unit = 100 * Math.exp(3 * (2 * random.nextDouble() - 1));
            for (int k = 0; k < cards.size(); k++) {
                base[c][k] = unit * CardPriors.relativeSpeed(cards.get(k)).orElseThrow() * Math.exp(0.3 * random.nextGaussian());
            }
        }
        var bias = IntStream.range(0, namespaces).mapToDouble(n -> Math.exp(0.05 * random.nextGaussian())).toArray();
        int[] gpus = {1, 4, 8};
        double[] perGpu = {1, 0.85, 0.7};
        var state = new ArrayList<LearnedState.ClassSamples>();
        for (int c = 0; c < classes; c++) {
            var cardStates = new ArrayList<LearnedState.CardSamples>();
            for (int k = 0; k < cards.size(); k++) {
                var windows = new ArrayList<LearnedState.NamespaceSamples>();
                for (int b = 0; b < gpus.length; b++) {
                    for (int n = 0; n < namespaces; n++) {
                        var window = new ArrayList<Double>();
                        for (int i = 0; i < settings.windowSize(); i++) {
                            double speed = base[c][k] * perGpu[b] * bias[n] * Math.exp(0.1 * random.nextGaussian())
                                    * (random.nextDouble() < 0.05 ? 0.6 : 1);
                            // As a run measures it: work over run time and GPUs.
                            double seconds = 1800 + random.nextInt(7200);
                            window.add(new WorkSample("c", "n", cards.get(k), gpus[b], seconds, speed * seconds * gpus[b], END).throughputPerGpu());
                        }
                        windows.add(new LearnedState.NamespaceSamples(String.format(Locale.ROOT, "research-team-%02d", n), window,
                                ThroughputLearner.bucket(gpus[b])));
                    }
                }
                cardStates.add(new LearnedState.CardSamples(cards.get(k), windows));
            }
            state.add(new LearnedState.ClassSamples(String.format(Locale.ROOT, "model-%02d-b256", c), cardStates));
        }
        return new LearnedState(state);
    }

    /**
     * @param figures       cards compared, all classes together
     * @param worstError    the largest relative difference of a figure
     * @param priorsAlike   the same classes and cards, measured or prior alike
     * @param leastRunsKept the smallest share of a measured figure's runs that the restored figure rests on
     */
    record Comparison(int figures, double worstError, boolean priorsAlike, double leastRunsKept, double mostRunsKept) {
    }

    /** Every class and card of the live table against the restored one. */
    static Comparison compare(LearnedTable live, LearnedTable restored) {
        int figures = 0;
        double worst = 0;
        double least = Double.POSITIVE_INFINITY;
        double most = 0;
        boolean alike = live.byClass().keySet().equals(restored.byClass().keySet());
        for (var row : live.byClass().entrySet()) {
            var other = restored.byClass().getOrDefault(row.getKey(), java.util.Map.of());
            alike &= row.getValue().keySet().equals(other.keySet());
            for (var card : row.getValue().entrySet()) {
                var theirs = other.get(card.getKey());
                if (theirs == null) {
                    worst = Double.POSITIVE_INFINITY;
                    continue;
                }
                figures++;
                worst = Math.max(worst, Math.abs(theirs.throughputPerGpu() / card.getValue().throughputPerGpu() - 1));
                alike &= theirs.prior() == card.getValue().prior();
                if (!card.getValue().prior()) {
                    double kept = theirs.samples() / (double) card.getValue().samples();
                    least = Math.min(least, kept);
                    most = Math.max(most, kept);
                }
            }
        }
        return new Comparison(figures, worst, alike, least, most);
    }

    private static int samples(LearnedState state) {
        return state.classes().stream().flatMap(c -> c.cards().stream()).flatMap(card -> card.namespaces().stream())
                .mapToInt(ns -> ns.throughputsPerGpu().size()).sum();
    }

    private static LearnedState.NamespaceSamples window(String namespace, int gpus, double... throughputs) {
        return new LearnedState.NamespaceSamples(namespace, java.util.Arrays.stream(throughputs).boxed().toList(), gpus);
    }

    private static LearnedState state(LearnedState.NamespaceSamples... namespaces) {
        return new LearnedState(List.of(new LearnedState.ClassSamples("bert", List.of(new LearnedState.CardSamples("V100",
                List.of(namespaces))))));
    }
}
