package io.hetgpu.extender.throughput;

/**
 * The bounds of what the extender learns about workload speeds ({@code policy.learning} in its configuration file).
 * Every buffer the learner keeps is bounded by these, never by what pods report.
 *
 * @param enabled               learn from pods that end (on by default: real clusters have no table)
 * @param minRunSeconds         a run shorter than this is not a measurement (a pod that crashed early, or the start-up
 *                              of a job dominating its run): 120 s by default
 * @param windowSize            samples kept per namespace for one class on one card model; the newest win. 16 by
 *                              default: a median of 16 shrugs off a few slow neighbours or stragglers
 * @param maxNamespaces         namespaces kept per class and card model; the least recently seen is dropped. 16
 * @param maxClasses            workload classes kept; the least recently seen is dropped. 64
 * @param outlierFactor         once a namespace has {@code outlierMinSamples} samples of a class on a card, a sample
 *                              more than this factor above or below their median is refused as an outlier. 5: a run
 *                              that crashed after a fifth of its work, or a throttled node, is not a measurement
 * @param outlierMinSamples     samples a namespace's figure needs before it judges outliers. 5
 * @param maxNamespaceInfluence how far (a factor) a namespace can move the figure another namespace established alone
 *                              on a card ({@link ThroughputLearner} says how). 2
 * @param explore               low-priority pods try cards their class has never run on (its figure there is only a
 *                              prior), so the table fills in. On by default
 */
public record LearningSettings(boolean enabled, double minRunSeconds, int windowSize, int maxNamespaces, int maxClasses,
                               double outlierFactor, int outlierMinSamples, double maxNamespaceInfluence, boolean explore) {

    public static final LearningSettings DEFAULTS = new LearningSettings(true, 120, 16, 16, 64, 5, 5, 2, true);

    /** Learning off: the admin's table alone, as before learning existed. */
    public static final LearningSettings OFF = DEFAULTS.withEnabled(false);

    /** Upper bounds on the bounds, so that a configuration cannot make the learner's memory unbounded in practice. */
    static final int MAX_WINDOW = 1024;
    static final int MAX_NAMESPACES = 1024;
    static final int MAX_CLASSES = 4096;

    public LearningSettings {
        require(minRunSeconds >= 0 && minRunSeconds <= 86_400 * 30, "minRunSeconds", "from 0 to 2592000 (30 days)", minRunSeconds);
        require(windowSize >= 1 && windowSize <= MAX_WINDOW, "windowSize", "from 1 to " + MAX_WINDOW, windowSize);
        require(maxNamespaces >= 1 && maxNamespaces <= MAX_NAMESPACES, "maxNamespaces", "from 1 to " + MAX_NAMESPACES, maxNamespaces);
        require(maxClasses >= 1 && maxClasses <= MAX_CLASSES, "maxClasses", "from 1 to " + MAX_CLASSES, maxClasses);
        require(outlierFactor > 1 && outlierFactor <= 1000, "outlierFactor", "above 1 and at most 1000", outlierFactor);
        require(outlierMinSamples >= 1 && outlierMinSamples <= MAX_WINDOW, "outlierMinSamples", "from 1 to " + MAX_WINDOW, outlierMinSamples);
        require(maxNamespaceInfluence >= 1 && maxNamespaceInfluence <= 1000, "maxNamespaceInfluence", "from 1 to 1000",
                maxNamespaceInfluence);
    }

    public LearningSettings withEnabled(boolean on) {
        return new LearningSettings(on, minRunSeconds, windowSize, maxNamespaces, maxClasses, outlierFactor, outlierMinSamples,
                maxNamespaceInfluence, explore);
    }

    private static void require(boolean holds, String field, String expected, Object got) {
        if (!holds) {
            throw new IllegalArgumentException("learning." + field + ": expected " + expected + ", got " + got);
        }
    }
}
