package io.hetgpu.extender.job;

/**
 * The convention a pod's job was read from, in the order {@link JobMembershipReader} tries them: a pod that follows
 * several belongs to the job of the first.
 *
 * <p>Why this order: the pod's explicit {@code hetgpu.io/job} is addressed to this scheduler and always wins. Next come
 * the gang-scheduling groups, which a scheduler enforces and which define the minimum that must start together
 * (kube-scheduler's own PodGroup and Workload, then Volcano's and scheduler-plugins' PodGroup): when a training
 * operator also created a group, the group is what will be held all or nothing. Then the training operators, whose
 * labels name the job the user submitted, then JobSet, which those operators (Kubeflow Trainer) and users build on,
 * and last a lone indexed Job, the lowest layer, whose pods a JobSet's also carry.
 */
public enum JobSource {
    /** The {@code hetgpu.io/job} label. */
    HETGPU("hetgpu.io/job"),
    /** kube-scheduler's PodGroup API (alpha, Kubernetes 1.36 and 1.37): {@code spec.schedulingGroup.podGroupName}. */
    KUBE_POD_GROUP("spec.schedulingGroup"),
    /** kube-scheduler's Workload API as Kubernetes 1.35 served it (alpha): {@code spec.workloadRef}, removed in 1.36. */
    KUBE_WORKLOAD("spec.workloadRef"),
    /** Volcano's pod group annotation. */
    VOLCANO_POD_GROUP("Volcano PodGroup"),
    /** scheduler-plugins' coscheduling label. */
    COSCHEDULING_POD_GROUP("coscheduling PodGroup"),
    /** Kubeflow's training operator (TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob, JAXJob). */
    KUBEFLOW_TRAINING("Kubeflow training job"),
    /** A JobSet, also what Kubeflow Trainer's TrainJob runs as (the JobSet bears the TrainJob's name). */
    JOBSET("JobSet"),
    /** A batch Job in Indexed completion mode. */
    INDEXED_JOB("indexed Job");

    private final String label;

    JobSource(String label) {
        this.label = label;
    }

    /** How reasons and docs name the convention. */
    public String label() {
        return label;
    }
}
