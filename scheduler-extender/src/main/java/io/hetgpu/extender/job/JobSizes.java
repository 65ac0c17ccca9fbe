package io.hetgpu.extender.job;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * The member count of a job, from the pod's own statement or from the cluster object that holds it (a PodGroup's
 * {@code minMember}, a Workload pod group's {@code minCount}, a Job's {@code completions}, a JobSet's replicated jobs).
 */
public interface JobSizes {

    /** The count, or empty when it is not known (yet): {@link #whyUnknown} then says why. */
    OptionalInt membersOf(JobMembership job);

    /**
     * Why {@link #membersOf} is empty for this job, in one line for a reason or a log (the object not found, its API not
     * served, its field missing or unreadable, quoted); empty when the count is known.
     */
    default Optional<String> whyUnknown(JobMembership job) {
        return membersOf(job).isPresent() ? Optional.empty() : Optional.of(job.size().describe());
    }

    /**
     * Knows only what the pod states; follows no cluster object: what the extender has without an API server. With one,
     * {@code io.hetgpu.extender.cluster.JobObjectSizes} reads the objects.
     */
    JobSizes STATED_ONLY = job -> job.size() instanceof JobSize.Stated stated ? OptionalInt.of(stated.members()) : OptionalInt.empty();
}
