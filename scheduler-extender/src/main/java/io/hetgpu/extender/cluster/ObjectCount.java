package io.hetgpu.extender.cluster;

import java.util.Map;

/**
 * What one object says of its job's member count: all {@link JobObjectSizes} keeps of it. A reason reads after the
 * object's kind and name ("PodGroup.scheduling.volcano.sh "train" in namespace ml " + reason).
 */
sealed interface ObjectCount {

    /** The count: at least 1. */
    record Members(int members) implements ObjectCount {
        public Members {
            if (members < 1) {
                throw new IllegalArgumentException("members must be >= 1, got " + members);
            }
        }
    }

    /** No count can be read, and why: the field missing or not a whole number, quoted. */
    record Unreadable(String reason) implements ObjectCount {
    }

    /**
     * A kube-scheduler PodGroup that states no scheduling policy of its own but names the Workload template it was made
     * from: the count is that template's. {@code field} is where the PodGroup names it, for reasons.
     */
    record FromTemplate(String workload, String template, String field) implements ObjectCount {
    }

    /** A Workload: one count per pod group (or pod group template), by its name. */
    record ByPodGroup(Map<String, ObjectCount> groups) implements ObjectCount {
        public ByPodGroup {
            groups = Map.copyOf(groups);
        }
    }
}
