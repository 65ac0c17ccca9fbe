package io.hetgpu.extender.throughput;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;

/**
 * The learned state made to fit a size (the ConfigMap's 1 MiB), giving up first what the figures do not rest on. At the
 * learner's largest default bounds (64 classes, every catalog card in three pod sizes, 16 namespaces, windows of 16)
 * the samples take some 20 MB of JSON; what a restart needs from them is each namespace's vote (its window's median),
 * the figure they make, and how many runs it rests on. So the steps, each tried only where the one before did not fit:
 *
 * <ol>
 * <li>figures to {@value #DIGITS} significant digits (a run's speed is not known closer than that);
 * <li>each window summarised by 9, then 5, 3 and 1 of its samples around its median, in their order in time, with the
 *     runs it stands for ({@link LearnedState.NamespaceSamples#runs}): the learner restores it as a window of as many
 *     samples with the same median, so votes, figures and counts come back as they were;
 * <li>a class's figures for pod sizes other than the one it is compared at ({@link ThroughputLearner#referenceBucket}),
 *     on cards where that size has its own figure (the table does not read them; they would count again only if the
 *     class came to be measured on more cards at another size);
 * <li>each class and card's namespaces cut to the middle 8, then 4 (or 3) votes, as many dropped from the top as from the
 *     bottom, so the median of the votes, the figure, stays (it rests on fewer runs);
 * <li>each class and card kept as one namespace (the one whose vote is nearest the figure) whose window is the figure;
 * <li>the least recently seen classes, as few as need be.
 * </ol>
 *
 * Until the last step every figure of the table the learner restores is the live one to {@value #DIGITS} digits, and
 * until the namespaces are cut every count. A step is encoded only where {@link #leastChars} says it may fit: at most
 * 10 encodings, and a binary search over the classes.
 */
public final class StateFit {

    /** Significant digits a figure is kept to once the state does not fit whole. */
    public static final int DIGITS = 4;

    private static final MathContext ROUNDING = new MathContext(DIGITS);
    /** 1 to 1e22: the powers of ten a double holds exactly. */
    private static final double[] POWERS_OF_TEN = new double[23];

    static {
        double power = 1;
        for (int i = 0; i < POWERS_OF_TEN.length; i++) {
            POWERS_OF_TEN[i] = power;
            power *= 10;
        }
    }

    /**
     * The fitted JSON and how it was made to fit.
     *
     * @param how the last step taken, in words ("whole" where nothing was given up)
     */
    public record Fitted(String json, String how) {
    }

    private record Step(String how, UnaryOperator<LearnedState> apply, ToLongFunction<LearnedState> least) {
    }

    private StateFit() {
    }

    /**
     * The state as JSON within {@code maxChars}, giving up as little as the steps above allow; {@code settings} are the
     * learner's (the figure of two namespaces depends on its {@link LearningSettings#maxNamespaceInfluence}).
     */
    public static Fitted fit(LearnedState state, int maxChars, LearningSettings settings) {
        // Written only where it may fit: at the learner's bounds the whole state is 20 MB of JSON, seconds to write.
        if (leastChars(state) <= maxChars) {
            var json = LearnedStateCodec.toJson(state);
            if (json.length() <= maxChars) {
                return new Fitted(json, "whole");
            }
        }
        // Each step with the fewest characters its result can take, counted before it is made: a step that cannot fit
        // is passed over (a later summary is made from the whole windows, not from a summary).
        var steps = List.of(
                new Step("figures rounded to " + DIGITS + " significant digits", StateFit::rounded, s -> leastChars(s, Integer.MAX_VALUE)),
                new Step("windows summarised by 9 samples around their median", s -> summarised(s, 9), s -> leastChars(s, 9)),
                new Step("windows summarised by 5 samples around their median", s -> summarised(s, 5), s -> leastChars(s, 5)),
                new Step("windows summarised by 3 samples around their median", s -> summarised(s, 3), s -> leastChars(s, 3)),
                new Step("windows summarised by their median", s -> summarised(s, 1), s -> 0L),
                new Step("figures of other pod sizes dropped", StateFit::referenceSizes, s -> 0L),
                new Step("namespaces cut to the middle 8 votes", s -> middleVotes(s, 8), s -> 0L),
                new Step("namespaces cut to the middle 4 votes", s -> middleVotes(s, 4), s -> 0L),
                new Step("each class and card kept as one figure", s -> oneVote(s, settings), s -> 0L));
        var fitted = state;
        for (var step : steps) {
            if (step.least().applyAsLong(fitted) > maxChars) {
                continue;
            }
            fitted = step.apply().apply(fitted);
            if (leastChars(fitted) <= maxChars) {
                var json = LearnedStateCodec.toJson(fitted);
                if (json.length() <= maxChars) {
                    return new Fitted(json, step.how());
                }
            }
        }
        // The least recently seen classes first: the fewest that make it fit (fewer dropped is never smaller).
        var classes = fitted.classes();
        int low = 1;
        int high = classes.size();
        var best = LearnedStateCodec.toJson(LearnedState.EMPTY);
        int dropped = classes.size();
        while (low <= high) {
            int drop = (low + high) >>> 1;
            var candidate = LearnedStateCodec.toJson(new LearnedState(classes.subList(drop, classes.size())));
            if (candidate.length() <= maxChars) {
                best = candidate;
                dropped = drop;
                high = drop - 1;
            } else {
                low = drop + 1;
            }
        }
        return new Fitted(best, "each class and card kept as one figure, the " + dropped + " least recently seen classes dropped");
    }

    /** Every figure to {@value #DIGITS} significant digits. */
    static LearnedState rounded(LearnedState state) {
        return eachCell(state, namespaces -> namespaces.stream().map(ns -> new LearnedState.NamespaceSamples(ns.namespace(),
                ns.throughputsPerGpu().stream().map(StateFit::round).toList(), ns.gpus(), ns.runs())).toList());
    }

    /**
     * {@code value} to {@value #DIGITS} significant digits, as the double nearest that decimal (so JSON writes it short):
     * an integer times or over an exact power of ten, one correctly rounded operation. A million of them at the
     * learner's bounds, so not through BigDecimal but where the power of ten is not exact (beyond 1e22).
     */
    static double round(double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            return value;
        }
        int shift = DIGITS - 1 - (int) Math.floor(Math.log10(value));
        if (Math.abs(shift) > 22) {
            return new BigDecimal(value).round(ROUNDING).doubleValue();
        }
        double power = POWERS_OF_TEN[Math.abs(shift)];
        return shift >= 0 ? Math.rint(value * power) / power : Math.rint(value / power) * power;
    }

    /** Each window longer than {@code keep} (odd) summarised by {@code keep} of its samples around its median. */
    static LearnedState summarised(LearnedState state, int keep) {
        return eachCell(state, namespaces -> namespaces.stream().map(ns -> summarised(ns, keep)).toList());
    }

    /**
     * A window by {@code keep} (odd) of its samples: its median (for an even count the geometric mean of the middle two,
     * as the learner takes it, rounded), and as many samples evenly spread through the lower half as through the upper,
     * in their order in time, so the summary's median is the window's. The runs it stands for are kept.
     */
    static LearnedState.NamespaceSamples summarised(LearnedState.NamespaceSamples ns, int keep) {
        int count = ns.throughputsPerGpu().size();
        var values = new double[count];
        for (int i = 0; i < count; i++) {
            values[i] = round(ns.throughputsPerGpu().get(i));
        }
        if (count <= keep) {
            return new LearnedState.NamespaceSamples(ns.namespace(), Arrays.stream(values).boxed().toList(), ns.gpus(), ns.runs());
        }
        var byValue = new Integer[count];
        for (int i = 0; i < count; i++) {
            byValue[i] = i;
        }
        Arrays.sort(byValue, (a, b) -> Double.compare(values[a], values[b]));
        // What is kept, as (position in time, value): ranks spread evenly through each half, and the median, in the place
        // of the middle sample (for an even count, of the later of the middle two).
        int half = (keep - 1) / 2;
        int lower = count / 2;
        var positions = new int[keep];
        int next = 0;
        for (int i = 0; i < half; i++) {
            int rank = (int) ((i + 0.5) * lower / half);
            positions[next++] = byValue[rank];
            positions[next++] = byValue[count - 1 - rank];
        }
        double median;
        int at;
        if (count % 2 == 1) {
            at = byValue[count / 2];
            median = values[at];
        } else {
            at = Math.max(byValue[count / 2 - 1], byValue[count / 2]);
            median = round(Math.sqrt(values[byValue[count / 2 - 1]] * values[byValue[count / 2]]));
        }
        var kept = new ArrayList<Double>(keep);
        // Sorted by position; the median last among equals (it may share a place with a picked middle sample).
        positions[next] = at;
        Arrays.sort(positions, 0, next);
        boolean medianPlaced = false;
        for (int i = 0; i < next; i++) {
            if (!medianPlaced && positions[i] > at) {
                kept.add(median);
                medianPlaced = true;
            }
            kept.add(values[positions[i]]);
        }
        if (!medianPlaced) {
            kept.add(median);
        }
        return new LearnedState.NamespaceSamples(ns.namespace(), kept, ns.gpus(), ns.runs());
    }

    /**
     * Each class and card's namespaces beyond {@code atMost} cut to the middle votes: as many of the lowest as of the
     * highest dropped, so that the median of the votes (the figure, for three namespaces or more) is unchanged. The
     * namespaces kept stay in their order.
     */
    static LearnedState middleVotes(LearnedState state, int atMost) {
        return eachCell(state, namespaces -> {
            int count = namespaces.size();
            if (count <= atMost) {
                return namespaces;
            }
            int dropEachSide = (count - atMost + 1) / 2;
            var byVote = new ArrayList<Integer>(count);
            for (int i = 0; i < count; i++) {
                byVote.add(i);
            }
            byVote.sort(Comparator.comparingDouble(i -> vote(namespaces.get(i))));
            var keep = new boolean[count];
            for (int rank = dropEachSide; rank < count - dropEachSide; rank++) {
                keep[byVote.get(rank)] = true;
            }
            var kept = new ArrayList<LearnedState.NamespaceSamples>();
            for (int i = 0; i < count; i++) {
                if (keep[i]) {
                    kept.add(namespaces.get(i));
                }
            }
            return kept;
        });
    }

    /**
     * A class's figures at pod sizes other than the size its cards are compared at, on cards where that size has a
     * figure of its own, dropped: the table reads one size per card.
     */
    static LearnedState referenceSizes(LearnedState state) {
        var classes = new ArrayList<LearnedState.ClassSamples>();
        for (var workload : state.classes()) {
            var cells = new LinkedHashSet<ThroughputLearner.CardBucket>();
            for (var card : workload.cards()) {
                for (var ns : card.namespaces()) {
                    cells.add(new ThroughputLearner.CardBucket(card.cardModel(), ThroughputLearner.bucket(ns.gpus())));
                }
            }
            int reference = ThroughputLearner.referenceBucket(cells);
            var cards = new ArrayList<LearnedState.CardSamples>();
            for (var card : workload.cards()) {
                boolean hasReference = card.namespaces().stream().anyMatch(ns -> ThroughputLearner.bucket(ns.gpus()) == reference);
                cards.add(new LearnedState.CardSamples(card.cardModel(), card.namespaces().stream()
                        .filter(ns -> !hasReference || ThroughputLearner.bucket(ns.gpus()) == reference).toList()));
            }
            classes.add(new LearnedState.ClassSamples(workload.workloadClass(), cards));
        }
        return new LearnedState(classes);
    }

    /**
     * Each class and card as one namespace, the one whose vote is nearest the figure (the first on a tie), its window the
     * figure itself, standing for its own runs: the figure stays; the other namespaces, and the runs they made, go.
     */
    static LearnedState oneVote(LearnedState state, LearningSettings settings) {
        return eachCell(state, namespaces -> {
            if (namespaces.size() <= 1) {
                return namespaces;
            }
            var votes = namespaces.stream().mapToDouble(StateFit::vote).toArray();
            double figure = round(ThroughputLearner.combine(votes, settings.maxNamespaceInfluence()));
            int nearest = 0;
            for (int i = 1; i < votes.length; i++) {
                if (Math.abs(Math.log(votes[i] / figure)) < Math.abs(Math.log(votes[nearest] / figure))) {
                    nearest = i;
                }
            }
            var kept = namespaces.get(nearest);
            return List.of(new LearnedState.NamespaceSamples(kept.namespace(), List.of(figure), kept.gpus(), kept.runs()));
        });
    }

    /**
     * No more characters than the state's JSON takes: every name, the fixed text around it, and three per figure
     * ("1.0") and a comma between two (the commas between objects left out). Counted, not written, so a state far too large costs no encoding.
     */
    static long leastChars(LearnedState state) {
        return leastChars(state, Integer.MAX_VALUE);
    }

    /** {@link #leastChars(LearnedState)} of the state with every window cut to {@code window} samples. */
    static long leastChars(LearnedState state, int window) {
        long chars = "{'schema':1,'classes':[]}".length();
        for (var workload : state.classes()) {
            chars += "{'class':'','cards':[]}".length() + workload.workloadClass().length();
            for (var card : workload.cards()) {
                chars += "{'card':'','namespaces':[]}".length() + card.cardModel().length();
                for (var ns : card.namespaces()) {
                    chars += "{'namespace':'','gpus':1,'throughputs':[]}".length() + ns.namespace().length()
                            + Math.max(0, 4L * Math.min(window, ns.throughputsPerGpu().size()) - 1);
                }
            }
        }
        return chars;
    }

    /** A namespace's vote: its window's median, as the learner takes it. */
    private static double vote(LearnedState.NamespaceSamples ns) {
        var values = ns.throughputsPerGpu().stream().mapToDouble(Double::doubleValue).toArray();
        return values.length == 0 ? 0 : ThroughputLearner.median(values);
    }

    /**
     * The state with each class, card and pod size's namespaces (a cell of the learner) replaced by {@code change} of
     * them; cells stay in the order of their first namespace.
     */
    private static LearnedState eachCell(LearnedState state, UnaryOperator<List<LearnedState.NamespaceSamples>> change) {
        var classes = new ArrayList<LearnedState.ClassSamples>(state.classes().size());
        for (var workload : state.classes()) {
            var cards = new ArrayList<LearnedState.CardSamples>(workload.cards().size());
            for (var card : workload.cards()) {
                var cells = new LinkedHashMap<Integer, List<LearnedState.NamespaceSamples>>();
                for (var ns : card.namespaces()) {
                    cells.computeIfAbsent(ThroughputLearner.bucket(ns.gpus()), bucket -> new ArrayList<>()).add(ns);
                }
                var namespaces = new ArrayList<LearnedState.NamespaceSamples>();
                cells.values().forEach(cell -> namespaces.addAll(change.apply(cell)));
                cards.add(new LearnedState.CardSamples(card.cardModel(), namespaces));
            }
            classes.add(new LearnedState.ClassSamples(workload.workloadClass(), cards));
        }
        return new LearnedState(classes);
    }
}
