package io.hetgpu.extender.throughput;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import java.util.Objects;

/**
 * Where the policy reads the workload speed table, once per request: the one indirection between what the learner
 * knows now and the policy's filters and scorers, so that a new table never rebuilds them. A memo of an assessment is
 * valid only for the {@link Snapshot#version} it was computed under.
 */
@FunctionalInterface
public interface ThroughputSource {

    /** The table now. Cheap: a cached snapshot until the learner changes. */
    Snapshot current();

    /**
     * @param version changes whenever {@code table} may (0 for a fixed table)
     * @param table   the admin's rows merged with the learned ones
     * @param learned the learned figures behind it (sample counts, priors), for explanations; empty for a fixed table
     * @param explore low-priority pods may try cards where their class's figure is only a prior
     *                ({@link LearningSettings#explore})
     */
    record Snapshot(long version, WorkloadThroughputs table, LearnedTable learned, boolean explore) {
        public Snapshot {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(learned, "learned");
        }

        public Snapshot(long version, WorkloadThroughputs table, LearnedTable learned) {
            this(version, table, learned, false);
        }

        /**
         * The figure behind a card's rank or refusal, as an explanation says it: "412 per GPU-second for bert on V100,
         * learned from 12 samples", "..., a prior (never run there)", "..., from the admin's table"; "" where the table
         * has no figure.
         */
        public String describe(String workload, String model) {
            double figure = table.of(workload, model);
            if (!(figure > 0)) {
                return "";
            }
            var head = String.format(java.util.Locale.ROOT, "%.4g per GPU-second for %s on %s", figure,
                    WorkloadThroughputs.className(workload), model);
            if (table.isPrior(workload, model)) {
                return head + ", a prior (never run there)";
            }
            var speed = learned.byClass().getOrDefault(WorkloadThroughputs.className(workload), java.util.Map.of()).get(model);
            if (speed != null && !speed.prior() && speed.throughputPerGpu() == figure) {
                return head + ", learned from " + speed.samples() + (speed.samples() == 1 ? " sample" : " samples");
            }
            return head + ", from the admin's table";
        }
    }

    /** A table that never changes: the admin's alone (learning off, tests, tools). */
    static ThroughputSource fixed(WorkloadThroughputs table) {
        var snapshot = new Snapshot(0, table, LearnedTable.EMPTY);
        return () -> snapshot;
    }

    /** The admin's table merged over what {@code learner} knows now; the merge is recomputed only when it changes. */
    static ThroughputSource learning(ThroughputLearner learner, WorkloadThroughputs configured) {
        return new LearningSource(learner, configured);
    }

    /** {@link #learning}: one merge per learned version, shared by every request that reads it. */
    final class LearningSource implements ThroughputSource {
        private final ThroughputLearner learner;
        private final WorkloadThroughputs configured;
        private volatile Snapshot last;

        LearningSource(ThroughputLearner learner, WorkloadThroughputs configured) {
            this.learner = Objects.requireNonNull(learner, "learner");
            this.configured = Objects.requireNonNull(configured, "configured");
        }

        public ThroughputLearner learner() {
            return learner;
        }

        @Override
        public Snapshot current() {
            var table = learner.table();
            var cached = last;
            if (cached != null && cached.version() == table.version()) {
                return cached;
            }
            // Versions start at 0 for an empty learner; a fixed source's 0 never meets a learning one's memos.
            var fresh = new Snapshot(table.version(), table.merged(configured), table, learner.settings().explore());
            last = fresh;
            return fresh;
        }
    }
}
