package io.hetgpu.extender.throughput;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.Quote;
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
 * <p><b>The figure.</b> Per class, card model and pod size ({@link #bucket}), each namespace keeps a window of its newest
 * {@link LearningSettings#windowSize} throughputs per GPU, and votes with their median (a few slow or fast runs do
 * not move a median). The figure is the median of the namespaces' votes (the geometric mean of the middle two for an
 * even count).
 *
 * <p><b>One namespace's bound.</b> Each namespace has its own window, so no flood of samples pushes another
 * namespace's samples out, and it has one vote however many samples it sends. With three namespaces or more, one
 * namespace's vote moves the figure at most to a neighbouring vote: it stays between the lowest and highest vote of
 * the others. With two, the figure is their geometric mean, kept within a factor
 * {@link LearningSettings#maxNamespaceInfluence} of the vote of the namespace that was there first: a tenant arriving
 * at a class and card another established moves its figure by at most that factor (2 by default), whatever it reports.
 * (Between two namespaces nothing tells the honest one from the other; the one that measured first is trusted. A
 * tenant that may create namespaces at will is as many tenants.)
 *
 * <p><b>Outliers.</b> Once a namespace has {@link LearningSettings#outlierMinSamples} samples of a class on a card, a
 * sample more than {@link LearningSettings#outlierFactor} from its own median is refused: a run that crashed
 * half-way through its work, or a node that throttled. Judged against the namespace's own runs, not the figure, so that
 * the first namespace to arrive cannot refuse everyone else's.
 *
 * <p><b>Bounds.</b> At most {@link LearningSettings#maxClasses} classes (the least recently seen dropped), at most
 * {@link #MAX_CARD_MODELS} card models per class (each in three sizes), {@link LearningSettings#maxNamespaces}
 * namespaces per class, card and size (the least recently seen dropped), {@link LearningSettings#windowSize} samples
 * per namespace.
 */
public final class ThroughputLearner {

    /** Card models kept per class (times three size buckets): more than the card catalog lists. */
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
    /** Class -> card model and GPU-count bucket -> its samples; access order: the first is the least recently seen. */
    private final LinkedHashMap<String, LinkedHashMap<CardBucket, Cell>> classes = new LinkedHashMap<>(16, 0.75f, true);

    /** One class's runs on one card model by pods of one size bucket ({@link #bucket}). */
    record CardBucket(String card, int bucket) {
    }

    /**
     * Pods of 1 GPU, of 2 to 4 and of 5 or more are measured apart: a job's speed per GPU falls as it spreads (Gavel's
     * language model runs on 4 P100s at 40 % of its one-GPU speed per GPU), and the larger jobs are not spread evenly
     * over the cards (high-priority jobs, on the newest cards, are more often large), so mixing sizes would skew the
     * ratio between cards. A class's figures come from one bucket where they can ({@link #table}).
     */
    static int bucket(int gpus) {
        return gpus <= 1 ? 1 : gpus <= 4 ? 2 : 5;
    }

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
        var cell = cards == null ? null : cards.get(new CardBucket(sample.cardModel(), bucket(sample.gpus())));
        var own = cell == null ? null : cell.namespaces.get(sample.namespace());
        if (own != null && own.size() >= settings.outlierMinSamples()) {
            // Judged against the namespace's own runs: its crashes and stragglers are what an outlier is. Another
            // namespace's figure is not the yardstick, or the first to arrive could refuse everyone else's samples.
            double figure = median(own.values());
            if (throughput > figure * settings.outlierFactor() || throughput < figure / settings.outlierFactor()) {
                return new Observation.Refused(String.format(Locale.ROOT,
                        "outlier: %s per GPU-second for workload %s on %s is more than %s times from namespace %s's figure %s (%d samples)",
                        number(throughput), workload, sample.cardModel(), number(settings.outlierFactor()), sample.namespace(),
                        number(figure), own.size()));
            }
        }
        add(workload, new CardBucket(sample.cardModel(), bucket(sample.gpus())), sample.namespace(), throughput);
        version++;
        return new Observation.Accepted(workload, sample.cardModel(), throughput);
    }

    /** Why a sample is not a measurement, naming the field and value, or null when it is one (outliers aside). */
    static String refusal(WorkSample sample, LearningSettings settings) {
        var names = nameRefusal(sample.workloadClass(), sample.namespace(), sample.cardModel());
        if (names != null) {
            return names;
        }
        if (sample.gpus() < 1 || sample.gpus() > MAX_GPUS) {
            return "gpus: expected 1 to " + MAX_GPUS + ", got " + sample.gpus();
        }
        if (!Double.isFinite(sample.runSeconds())) {
            return "run time: " + number(sample.runSeconds()) + " s is not a duration";
        }
        if (!(sample.runSeconds() >= settings.minRunSeconds()) || !(sample.runSeconds() > 0)) {
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

    /** Why a class, namespace or card model cannot key a figure (untrusted names), or null. */
    static String nameRefusal(String workloadClass, String namespace, String cardModel) {
        var workload = WorkloadThroughputs.className(workloadClass);
        if (workload.isEmpty()) {
            return "workload class: empty";
        }
        if (workload.length() > MAX_CLASS_CHARS || !CLASS_NAME.matcher(workload).matches()) {
            return "workload class: " + Quote.of(workloadClass) + " is not a name of at most " + MAX_CLASS_CHARS
                    + " lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit";
        }
        if (namespace.length() > 63 || !NAMESPACE.matcher(namespace).matches()) {
            return "namespace: " + Quote.of(namespace) + " is not a namespace name";
        }
        if (cardModel.isBlank() || "UNKNOWN".equals(cardModel) || !CardModel.fromProductName(cardModel).equals(cardModel)) {
            return "card model: unknown card " + Quote.of(cardModel);
        }
        return null;
    }

    private void add(String workload, CardBucket card, String namespace, double throughput) {
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
            if (cards.size() >= MAX_CARD_MODELS * 3) {
                dropFirst(cards);
            }
            cell = new Cell();
            cards.put(card, cell);
        }
        cell.add(namespace, throughput, ++tick, settings);
    }

    private static <K> void dropFirst(Map<K, ?> map) {
        Iterator<K> first = map.keySet().iterator();
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
            int reference = referenceBucket(entry.getValue().keySet());
            var byCard = new TreeMap<String, TreeMap<Integer, Cell>>();
            entry.getValue().forEach((key, cell) -> byCard.computeIfAbsent(key.card(), card -> new TreeMap<>()).put(key.bucket(), cell));
            for (var card : byCard.entrySet()) {
                // The reference bucket's figure, else the smallest bucket's: a measurement of another size beats a prior.
                int bucket = card.getValue().containsKey(reference) ? reference : card.getValue().firstKey();
                var cell = card.getValue().get(bucket);
                double figure = cell.figure(settings);
                row.put(card.getKey(), new LearnedTable.LearnedSpeed(figure, cell.samples(), false, bucket));
                measured.put(card.getKey(), figure);
            }
            for (var model : CardPriors.models()) {
                if (!row.containsKey(model)) {
                    double guess = CardPriors.extrapolate(measured, model);
                    if (guess > 0 && Double.isFinite(guess)) {
                        row.put(model, new LearnedTable.LearnedSpeed(guess, 0, true, 0));
                    }
                }
            }
            byClass.put(entry.getKey(), row);
        }
        snapshot = new LearnedTable(version, byClass);
        return snapshot;
    }

    /** The size bucket a class's figures come from: the one measured on the most card models; the smallest on a tie. */
    static int referenceBucket(java.util.Collection<CardBucket> cells) {
        var cards = new TreeMap<Integer, Integer>();
        for (var cell : cells) {
            cards.merge(cell.bucket(), 1, Integer::sum);
        }
        int best = 1;
        int most = -1;
        for (var entry : cards.entrySet()) {
            if (entry.getValue() > most) {
                best = entry.getKey();
                most = entry.getValue();
            }
        }
        return best;
    }

    /** What to persist: every window, bounded as the learner is. */
    public synchronized LearnedState state() {
        var result = new ArrayList<LearnedState.ClassSamples>();
        for (var entry : classes.entrySet()) {
            var cards = new LinkedHashMap<String, List<LearnedState.NamespaceSamples>>();
            for (var cell : entry.getValue().entrySet()) {
                cards.computeIfAbsent(cell.getKey().card(), card -> new ArrayList<>()).addAll(cell.getValue().state(cell.getKey().bucket()));
            }
            var cardStates = new ArrayList<LearnedState.CardSamples>();
            cards.forEach((card, namespaces) -> cardStates.add(new LearnedState.CardSamples(card, namespaces)));
            result.add(new LearnedState.ClassSamples(entry.getKey(), cardStates));
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
                    if (nameRefusal(workloadEntry.workloadClass(), ns.namespace(), cardEntry.cardModel()) != null) {
                        continue;
                    }
                    var valid = ns.throughputsPerGpu().stream().filter(t -> t != null && t > 0 && !Double.isInfinite(t)).toList();
                    for (var throughput : expanded(valid, ns.runs(), settings.windowSize())) {
                        add(WorkloadThroughputs.className(workloadEntry.workloadClass()), new CardBucket(cardEntry.cardModel(), bucket(ns.gpus())),
                                ns.namespace(), throughput);
                    }
                }
            }
        }
        version++;
    }

    /**
     * A window summarised by a few samples around its median ({@link LearnedState.NamespaceSamples#runs} above their
     * count) as the window it stands for: each sample repeated in its place in time, as many times as its share of the
     * runs (at most {@code windowSize} in all), the median's sample taking what does not divide evenly. For the odd counts
     * {@link StateFit} writes, as many copies lie below the median's as above, so the median, the namespace's vote, comes
     * back unchanged, and so does the count of runs a figure rests on. A window listed whole is returned as it is.
     */
    static List<Double> expanded(List<Double> listed, int runs, int windowSize) {
        int count = listed.size();
        if (count == 0 || runs <= count || count >= windowSize) {
            return listed;
        }
        int total = Math.min(runs, windowSize);
        var byValue = new Integer[count];
        for (int i = 0; i < count; i++) {
            byValue[i] = i;
        }
        Arrays.sort(byValue, (a, b) -> Double.compare(listed.get(a), listed.get(b)));
        var copies = new int[count];
        Arrays.fill(copies, total / count);
        copies[byValue[(count - 1) / 2]] += total % count;
        var result = new ArrayList<Double>(total);
        for (int i = 0; i < count; i++) {
            for (int c = 0; c < copies[i]; c++) {
                result.add(listed.get(i));
            }
        }
        return result;
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
            window.add(throughput, settings.windowSize());
            window.lastSeen = tick;
        }

        int samples() {
            int count = 0;
            for (var window : namespaces.values()) {
                count += window.size();
            }
            return count;
        }

        /** The median of the namespaces' medians; see the class comment for the two-namespace case. */
        double figure(LearningSettings settings) {
            var votes = new double[namespaces.size()];
            int i = 0;
            for (var window : namespaces.values()) {
                votes[i++] = median(window.values());
            }
            return combine(votes, settings.maxNamespaceInfluence());
        }

        List<LearnedState.NamespaceSamples> state(int bucket) {
            var result = new ArrayList<LearnedState.NamespaceSamples>();
            namespaces.forEach((namespace, window) -> result.add(new LearnedState.NamespaceSamples(namespace,
                    Arrays.stream(window.values()).boxed().toList(), bucket)));
            return result;
        }
    }

    /**
     * One namespace's newest samples, oldest first: a ring of plain doubles that grows to the window's size (8 bytes a
     * sample, not a boxed Double and a reference: a learner at its default bounds holds a million).
     */
    private static final class Window {
        private double[] ring = new double[0];
        /** Where the oldest sample is. */
        private int first;
        private int size;
        long lastSeen;

        /** Adds the newest sample; at {@code capacity} (the learner's window size, the same at every call) the oldest goes. */
        void add(double sample, int capacity) {
            if (size < capacity) {
                if (size == ring.length) {
                    // Never longer than capacity, so that a full window's ring is exactly as long as the window.
                    ring = values(Math.min(capacity, Math.max(4, 2 * ring.length)));
                    first = 0;
                }
                ring[(first + size) % ring.length] = sample;
                size++;
            } else {
                // Full: the ring is exactly capacity long (it grows no further), and its oldest slot takes the newest.
                ring[first] = sample;
                first = (first + 1) % ring.length;
            }
        }

        int size() {
            return size;
        }

        /** The samples, oldest first. */
        double[] values() {
            return values(size);
        }

        private double[] values(int length) {
            var ordered = new double[Math.max(length, size)];
            for (int i = 0; i < size; i++) {
                ordered[i] = ring[(first + i) % ring.length];
            }
            return ordered;
        }
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
