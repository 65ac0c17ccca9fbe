package io.hetgpu.extender.job;

import io.hetgpu.gpu.Quote;

/**
 * How many members a job has, as far as the pod itself can tell: a count the pod states, or the cluster object
 * that holds it (a pod does not carry its PodGroup's {@code minMember} or its Job's {@code completions}).
 */
public sealed interface JobSize {

    /** One line for reasons and logs. */
    String describe();

    /** The pod states the count itself ({@code hetgpu.io/job-size}). */
    record Stated(int members, String key) implements JobSize {
        public Stated {
            if (members < 1) {
                throw new IllegalArgumentException("members must be >= 1, got " + members);
            }
        }

        @Override
        public String describe() {
            return members + " members (" + key + ")";
        }
    }

    /**
     * Only a cluster object gives the count.
     *
     * @param kind  the object's kind, with its API group where kinds share a name (three projects call theirs PodGroup)
     * @param name  the object's name, in the pod's namespace
     * @param field where in that object the count is
     */
    record InObject(String kind, String name, String field) implements JobSize {
        @Override
        public String describe() {
            return "size unknown: read from " + kind + " " + Quote.of(name) + " (" + field + ")";
        }
    }

    /** Nothing gives the count: a {@code hetgpu.io/job} without {@code hetgpu.io/job-size}. */
    record Unstated(String hint) implements JobSize {
        @Override
        public String describe() {
            return "size unknown: " + hint;
        }
    }
}
