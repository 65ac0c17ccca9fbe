package io.hetgpu.extender.job;

import java.util.OptionalInt;

/**
 * The member count of a job, from the pod's own statement or from the cluster object that holds it (a PodGroup's
 * {@code minMember}, a Workload pod group's {@code minCount}, a Job's {@code completions}, a JobSet's replicated jobs).
 */
public interface JobSizes {

    /** The count, or empty when it is not known (yet): {@link JobSize#describe()} then says where it is to be read. */
    OptionalInt membersOf(JobMembership job);

    /**
     * Knows only what the pod states; follows no cluster object. The extender watches no PodGroup, Workload, Job or
     * JobSet yet (that needs informers and the RBAC to list them), so every other size is unknown here.
     */
    JobSizes STATED_ONLY = job -> job.size() instanceof JobSize.Stated stated ? OptionalInt.of(stated.members()) : OptionalInt.empty();
}
