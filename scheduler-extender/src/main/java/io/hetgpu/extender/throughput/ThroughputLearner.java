package io.hetgpu.extender.throughput;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.Quote;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Learns how fast each workload class runs on each card model from the pods that end ({@link WorkSample}s). Pure:
 * no I/O, no clock; thread-safe (one lock: a sample a minute is the rate, a table read is a cached snapshot).
 *
 * <p><b>The figure.</b> Per class and card model, each namespace keeps a window of its newest
 * {@link LearningSettings#windowSize} throughputs per GPU, and votes with their median (a few slow or fast runs do
 * not move a median). The figure is the median of the namespaces' votes (the geometric mean of the middle two for an
 * even count).
 *
 * <p><b>One namespace's bound.</b> Each namespace has its own window, so no flood of samples pushes another
 * namespace's samples out, and it has one vote however many samples it sends. With three namespaces or more, one
 * namespace's vote moves the figure at most to a neighbouring vote: it stays between the lowest and highest vote of
 * the others. With two, the figure is their geometric mean, kept within a factor
 * {@link LearningSettings#maxNamespaceInfluence} of the vote of the namespace that was there first: a tenant arriving
 * at a class and card another established moves its figure by at most that factor (2 by default), whatever it reports;
 * and once a figure rests on {@link LearningSettings#outlierMinSamples} samples, a sample more than
 * {@link LearningSettings#outlierFactor} from it is refused outright. (A tenant that may create namespaces at will is
 * as many tenants.)
 *
 * <p><b>Bounds.</b> At most {@link LearningSettings#maxClasses} classes (the least recently seen dropped), at most
 * {@link #MAX_CARD_MODELS} card models per class, {@link LearningSettings#maxNamespaces} namespaces per class and card
 * (the least recently seen dropped), {@link LearningSettings#windowSize} samples per namespace.
 */
public final class ThroughputLearner {

    /** Card models kept per class: more than the card catalog lists, and a node's model comes from its inventory. */
    public static final int MAX_CARD_MODELS = 64;
    /** Longest class name: a label value's limit, so a class can be shown and queried by label. */
    public static final int MAX_CLASS_CHARS = 63;
    /** More work than this in one run is not a figure any job reports (1e15 steps or images): it is a typo or a lie. */
    public static final double MAX_WORK = 1e15;
    /** More GPUs than a node holds (the allocator's 64-bit masks). */
    public static final int MAX_GPUS = 64;

    private static final Pattern CLASS_NAME = Pattern.compile("[a-z0-9]([a-z0-9._-]*[a-z0-9])?");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?");

    private final LearningSettings settings;
    /** Class -> card model -> its samples; access order, so the first entry is the least recently seen class. */
    private final LinkedHashMap<String, LinkedHashMap<String, Cell>> classes = new LinkedHashMap<>(16, 0.75f, true);
    private volatile long version;
    private long tick;
    private volatile LearnedTable snapshot;

    public ThroughputLearner(LearningSettings settings) {
        this.settings = settings;
    }

    public LearningSettings settings() {
        return settings;
    }

    /** Judges one pod's run: keeps it as a measurement, or says why it is not one. Never throws for bad values. */
    public synchronized Observation observe(WorkSample sample) {
        if (!settings.enabled()) {
            return new Observation.Refused("learning is off (policy.learning.enabled: false)");
        }
        var refusal = refusal(sample, settings);
        if (refusal != null) {
            return new Observation.Refused(refusal);
        }
        var workload = WorkloadThroughputs.className(sample.workloadClass());
        double throughput = sample.throughputPerGpu();
        var cards = classes.get(workload);
        var cell = cards == null ? null : cards.get(sample.cardModel());
        if (cell != null && cell.samples() >= settings.outlierMinSamples()) {
            double figure = cell.figure(settings);
            if (throughput > figure * settings.outlierFactor() || throughput < figure / settings.outlierFactor()) {
                return new Observation.Refused(String.format(Locale.ROOT,
                        "outlier: %s per GPU-second for workload %s on %s is more than %s times from its figure %s (%d samples)",
                        number(throughput), workload, sample.cardModel(), number(settings.outlierFactor()), number(figure),
                        cell.samples()));
            }
        }
        add(workload, sample.cardModel(), sample.namespace(), throughput);
        version++;
        return new Observation.Accepted(workload, sample.cardModel(), throughput);
    }

    /** Why a sample is not a measurement, naming the field and value, or null when it is one (outliers aside). */
    static String refusal(WorkSample sample, LearningSettings settings) {
        var workload = WorkloadThroughputs.className(sample.workloadClass());
        if (workload.isEmpty()) {
            return "workload class: empty";
        }
        if (workload.length() > MAX_CLASS_CHARS || !CLASS_NAME.matcher(workload).matches()) {
            return "workload class: " + Quote.of(sample.workloadClass()) + " is not a name of at most " + MAX_CLASS_CHARS
                    + " lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit";
        }
        if (sample.namespace().length() > 63 || !NAMESPACE.matcher(sample.namespace()).matches()) {
            return "namespace: " + Quote.of(sample.namespace()) + " is not a namespace name";
        }
        if (sample.cardModel().isBlank() || "UNKNOWN".equals(sample.cardModel())
                || !CardModel.fromProductName(sample.cardModel()).equals(sample.cardModel())) {
            return "card model: unknown card " + Quote.of(sample.cardModel());
        }
        if (sample.gpus() < 1 || sample.gpus() > MAX_GPUS) {
            return "gpus: expected 1 to " + MAX_GPUS + ", got " + sample.gpus();
        }
        if (!(sample.runSeconds() >= settings.minRunSeconds()) || Double.isInfinite(sample.runSeconds()) || !(sample.runSeconds() > 0)) {
            return "run time: " + number(sample.runSeconds()) + " s is below the " + number(settings.minRunSeconds())
                    + " s a measurement needs (policy.learning.minRunSeconds)";
        }
        if (!(sample.work() > 0) || !(sample.work() <= MAX_WORK)) {
            return "work: expected above 0 and at most 1e15, got " + number(sample.work());
        }
        double throughput = sample.throughputPerGpu();
        if (!(throughput > 0) || Double.isInfinite(throughput)) {
            return "throughput: " + number(throughput) + " per GPU-second is not a figure";
        }
        return null;
    }

    private void add(String workload, String card, String namespace, double throughput) {
        var cards = classes.get(workload);
        if (cards == null) {
            if (classes.size() >= settings.maxClasses()) {
                dropFirst(classes);
            }
            cards = new LinkedHashMap<>(16, 0.75f, true);
            classes.put(workload, cards);
        }
        var cell = cards.get(card);
        if (cell == null) {
            if (cards.size() >= MAX_CARD_MODELS) {
                dropFirst(cards);
            }
            cell = new Cell();
            cards.put(card, cell);
        }
        cell.add(namespace, throughput, ++tick, settings);
    }

    private static void dropFirst(Map<String, ?> map) {
        Iterator<String> first = map.keySet().iterator();
        first.next();
        first.remove();
    }

    /**
     * What the learner knows now, with priors filling the cards a class has not run on. Cached per version, and read
     * without the lock while it is current: the policy asks on every request.
     */
    public LearnedTable table() {
        var cached = snapshot;
        if (cached != null && cached.version() == version) {
            return cached;
        }
        return rebuild();
    }

    private synchronized LearnedTable rebuild() {
        if (snapshot != null && snapshot.version() == version) {
            return snapshot;
        }
        var byClass = new TreeMap<String, Map<String, LearnedTable.LearnedSpeed>>();
        // Read without touching the access order: iterating entrySet does not count as access.
        for (var entry : classes.entrySet()) {
            var row = new TreeMap<String, LearnedTable.LearnedSpeed>();
            var measured = new TreeMap<String, Double>();
            for (var card : entry.getValue().entrySet()) {
                double figure = card.getValue().figure(settings);
                row.put(card.getKey(), new LearnedTable.LearnedSpeed(figure, card.getValue().samples(), false));
                measured.put(card.getKey(), figure);
            }
            for (var model : CardPriors.models()) {
                if (!row.containsKey(model)) {
                    double guess = CardPriors.extrapolate(measured, model);
                    if (guess > 0 && Double.isFinite(guess)) {
                        row.put(model, new LearnedTable.LearnedSpeed(guess, 0, true));
                    }
                }
            }
            byClass.put(entry.getKey(), row);
        }
        snapshot = new LearnedTable(version, byClass);
        return snapshot;
    }

    /** What to persist: every window, bounded as the learner is. */
    public synchronized LearnedState state() {
        var result = new ArrayList<LearnedState.ClassSamples>();
        for (var entry : classes.entrySet()) {
            var cards = new ArrayList<LearnedState.CardSamples>();
            for (var card : entry.getValue().entrySet()) {
                cards.add(new LearnedState.CardSamples(card.getKey(), card.getValue().state()));
            }
            result.add(new LearnedState.ClassSamples(entry.getKey(), cards));
        }
        return new LearnedState(result);
    }

    /**
     * Replaces what the learner knows with a persisted state, under this learner's bounds (a window longer than
     * {@link LearningSettings#windowSize} keeps its newest samples, and so on); entries that are not valid (a class
     * name, card model, namespace or figure the learner would refuse) are skipped, outliers are not judged again.
     */
    public synchronized void restore(LearnedState state) {
        classes.clear();
        for (var workloadEntry : state.classes()) {
            for (var cardEntry : workloadEntry.cards()) {
                for (var ns : cardEntry.namespaces()) {
                    for (var throughput : ns.throughputsPerGpu()) {
                        var probe = new WorkSample(workloadEntry.workloadClass(), ns.namespace(), cardEntry.cardModel(), 1,
                                Math.max(1, settings.minRunSeconds()), throughput == null ? Double.NaN : throughput * Math.max(1, settings.minRunSeconds()),
                                java.time.Instant.EPOCH);
                        if (throughput != null && refusal(probe, settings) == null) {
                            add(WorkloadThroughputs.className(workloadEntry.workloadClass()), cardEntry.cardModel(), ns.namespace(), throughput);
                        }
                    }
                }
            }
        }
        version++;
    }

    static String number(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return String.valueOf(value);
        }
        return String.format(Locale.ROOT, "%.4g", value);
    }

    /** One class on one card model: each namespace's window, in the order the namespaces were first seen. */
    private static final class Cell {
        private final LinkedHashMap<String, Window> namespaces = new LinkedHashMap<>();

        void add(String namespace, double throughput, long tick, LearningSettings settings) {
            var window = namespaces.get(namespace);
            if (window == null) {
                if (namespaces.size() >= settings.maxNamespaces()) {
                    var stalest = namespaces.entrySet().stream().min(Map.Entry.comparingByValue((a, b) -> Long.compare(a.lastSeen, b.lastSeen)))
                            .orElseThrow().getKey();
                    namespaces.remove(stalest);
                }
                window = new Window();
                namespaces.put(namespace, window);
            }
            window.samples.addLast(throughput);
            while (window.samples.size() > settings.windowSize()) {
                window.samples.removeFirst();
            }
            window.lastSeen = tick;
        }

        int samples() {
            int count = 0;
            for (var window : namespaces.values()) {
                count += window.samples.size();
            }
            return count;
        }

        /** The median of the namespaces' medians; see the class comment for the two-namespace case. */
        double figure(LearningSettings settings) {
            var votes = new double[namespaces.size()];
            int i = 0;
            for (var window : namespaces.values()) {
                votes[i++] = median(window.samples.stream().mapToDouble(Double::doubleValue).toArray());
            }
            return combine(votes, settings.maxNamespaceInfluence());
        }

        List<LearnedState.NamespaceSamples> state() {
            var result = new ArrayList<LearnedState.NamespaceSamples>();
            namespaces.forEach((namespace, window) -> result.add(new LearnedState.NamespaceSamples(namespace, List.copyOf(window.samples))));
            return result;
        }
    }

    private static final class Window {
        final ArrayDeque<Double> samples = new ArrayDeque<>();
        long lastSeen;
    }

    /**
     * The figure from the namespaces' votes, in the order the namespaces were first seen: one vote is itself; two give
     * their geometric mean kept within {@code influence} of the first; more give their median (the geometric mean of the
     * middle two for an even count).
     */
    static double combine(double[] votes, double influence) {
        if (votes.length == 1) {
            return votes[0];
        }
        if (votes.length == 2) {
            double mean = Math.sqrt(votes[0] * votes[1]);
            return Math.min(votes[0] * influence, Math.max(votes[0] / influence, mean));
        }
        return median(votes);
    }

    /** The median; the geometric mean of the middle two for an even count (figures are ratios). */
    static double median(double[] values) {
        var sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : Math.sqrt(sorted[middle - 1] * sorted[middle]);
    }
}
