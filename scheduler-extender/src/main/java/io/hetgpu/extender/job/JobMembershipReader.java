package io.hetgpu.extender.job;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Reads which job a pod belongs to from the conventions users already run, tried in the order of {@link JobSource}
 * (its comment gives the reasons): the first convention the pod follows decides the job. docs/reference.md ("Job
 * conventions") lists the keys for users, and docs/concepts.md ("Which job a pod belongs to") explains the order.
 *
 * <p>Every problem goes to the caller's list, naming the key and quoting the value, like the pod's other
 * annotations: a pod that names its group wrongly is told so instead of being placed as if alone.
 */
public final class JobMembershipReader {

    // kube-scheduler's Workload API as 1.35 served it (alpha; 1.36 replaced the field with spec.schedulingGroup): fabric8
    // 7.8's PodSpec has no field for it, so it is read from the spec's unknown properties. (spec.schedulingGroup, of 1.36
    // and 1.37, is a typed field.)
    static final String WORKLOAD_REF = "workloadRef";

    // Volcano: the PodGroup annotation its scheduler reads, and its own spelling of it.
    public static final String VOLCANO_GROUP = "scheduling.k8s.io/group-name";
    public static final String VOLCANO_GROUP_ALT = "scheduling.volcano.sh/group-name";
    public static final String VOLCANO_TASK = "volcano.sh/task-spec";

    // scheduler-plugins' coscheduling.
    public static final String COSCHEDULING_GROUP = "scheduling.x-k8s.io/pod-group";

    // Kubeflow's training operator (the job name and replica type keys are HetgpuKeys.KUBEFLOW_JOB and KUBEFLOW_ROLE).
    public static final String KUBEFLOW_INDEX = "training.kubeflow.org/replica-index";

    // JobSet, which writes each as a label and an annotation.
    public static final String JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name";
    public static final String JOBSET_REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name";
    public static final String JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index";

    // The Job controller.
    public static final String JOB_NAME = "batch.kubernetes.io/job-name";
    public static final String JOB_NAME_LEGACY = "job-name";
    public static final String JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index";

    private JobMembershipReader() {
    }

    /**
     * The pod's job, or empty when it follows no convention or names its job wrongly (then {@code problems} says how).
     * Also reads {@code hetgpu.io/job-size}, which a pod may state for any convention.
     */
    public static Optional<JobMembership> read(Pod pod, List<String> problems) {
        var metadata = pod.getMetadata();
        var labels = metadata == null || metadata.getLabels() == null ? Map.<String, String>of() : metadata.getLabels();
        var annotations = metadata == null || metadata.getAnnotations() == null ? Map.<String, String>of() : metadata.getAnnotations();
        var namespace = metadata == null || metadata.getNamespace() == null ? "default" : metadata.getNamespace();
        var before = problems.size();
        var found = identify(pod, labels, annotations, problems);
        var stated = statedSize(labels, annotations, problems);
        if (problems.size() > before) {
            return Optional.empty();
        }
        if (found == null) {
            if (stated != null) {
                problems.add(HetgpuKeys.POD_JOB_SIZE + ": the pod names " + Quote.of(stated.members())
                        + " members but belongs to no job (no hetgpu.io/job, PodGroup, Workload, training job, JobSet or indexed Job)");
            }
            return Optional.empty();
        }
        var role = role(pod, labels, annotations);
        return Optional.of(new JobMembership(namespace, found.name, found.source, role, found.index,
                stated != null ? stated : found.size));
    }

    /** The job's key ({@link JobMembership#key()}), or empty for a pod of no job or one that names it wrongly. */
    public static Optional<String> keyOf(Pod pod) {
        return read(pod, new java.util.ArrayList<>()).map(JobMembership::key);
    }

    private record Found(String name, JobSource source, OptionalInt index, JobSize size) {
    }

    /** The first convention the pod follows; null for none (or a malformed one, with its problem added). */
    private static Found identify(Pod pod, Map<String, String> labels, Map<String, String> annotations, List<String> problems) {
        var job = labels.get(HetgpuKeys.POD_JOB);
        if (job != null) {
            return named(HetgpuKeys.POD_JOB, job, problems) ? new Found(job.strip(), JobSource.HETGPU, OptionalInt.empty(),
                    new JobSize.Unstated("the pod names no " + HetgpuKeys.POD_JOB_SIZE)) : null;
        }
        var spec = pod.getSpec();
        if (spec != null && spec.getSchedulingGroup() != null) {
            var group = spec.getSchedulingGroup().getPodGroupName();
            return named("spec.schedulingGroup.podGroupName", group, problems) ? new Found(group.strip(), JobSource.KUBE_POD_GROUP,
                    OptionalInt.empty(), new JobSize.InObject("PodGroup.scheduling.k8s.io", group.strip(), "spec.schedulingPolicy.gang.minCount")) : null;
        }
        var workloadRef = spec == null ? null : spec.getAdditionalProperties().get(WORKLOAD_REF);
        if (workloadRef != null) {
            return workload(workloadRef, problems);
        }
        var volcanoKey = annotations.containsKey(VOLCANO_GROUP) ? VOLCANO_GROUP : annotations.containsKey(VOLCANO_GROUP_ALT) ? VOLCANO_GROUP_ALT : null;
        if (volcanoKey != null) {
            var group = annotations.get(volcanoKey);
            return named(volcanoKey, group, problems) ? new Found(group.strip(), JobSource.VOLCANO_POD_GROUP, OptionalInt.empty(),
                    new JobSize.InObject("PodGroup.scheduling.volcano.sh", group.strip(), "spec.minMember")) : null;
        }
        var cogroup = labels.get(COSCHEDULING_GROUP);
        if (cogroup != null) {
            return named(COSCHEDULING_GROUP, cogroup, problems) ? new Found(cogroup.strip(), JobSource.COSCHEDULING_POD_GROUP, OptionalInt.empty(),
                    new JobSize.InObject("PodGroup.scheduling.x-k8s.io", cogroup.strip(), "spec.minMember")) : null;
        }
        var training = labels.get(HetgpuKeys.KUBEFLOW_JOB);
        if (training != null) {
            if (!named(HetgpuKeys.KUBEFLOW_JOB, training, problems)) {
                return null;
            }
            // The operator makes the training job the pod's controller: its kind says TFJob, PyTorchJob…
            var kind = controller(pod).map(OwnerReference::getKind).orElse("Kubeflow training job");
            return new Found(training.strip(), JobSource.KUBEFLOW_TRAINING, index(KUBEFLOW_INDEX, labels.get(KUBEFLOW_INDEX), problems),
                    new JobSize.InObject(kind, training.strip(), "the sum of its replica specs' replicas"));
        }
        var jobSet = either(labels, annotations, JOBSET_NAME);
        if (jobSet != null) {
            return named(JOBSET_NAME, jobSet, problems) ? new Found(jobSet.strip(), JobSource.JOBSET,
                    index(JOBSET_JOB_INDEX, either(labels, annotations, JOBSET_JOB_INDEX), problems),
                    new JobSize.InObject("JobSet", jobSet.strip(), "the sum over spec.replicatedJobs of replicas × parallelism")) : null;
        }
        // Only an Indexed Job is one job of distinct members; a NonIndexed Job's pods are interchangeable workers.
        var completion = either(annotations, labels, JOB_COMPLETION_INDEX);
        var jobKey = labels.containsKey(JOB_NAME) ? JOB_NAME : labels.containsKey(JOB_NAME_LEGACY) ? JOB_NAME_LEGACY : null;
        if (completion != null && jobKey != null) {
            var name = labels.get(jobKey);
            return named(jobKey, name, problems) ? new Found(name.strip(), JobSource.INDEXED_JOB, index(JOB_COMPLETION_INDEX, completion, problems),
                    new JobSize.InObject("Job", name.strip(), "spec.completions")) : null;
        }
        return null;
    }

    private static Found workload(Object workloadRef, List<String> problems) {
        if (!(workloadRef instanceof Map<?, ?> ref)) {
            problems.add("spec." + WORKLOAD_REF + ": expected an object with name and podGroup, got " + Quote.of(workloadRef));
            return null;
        }
        var name = ref.get("name") instanceof String text ? text : null;
        var podGroup = ref.get("podGroup") instanceof String text ? text : null;
        boolean named = named("spec.workloadRef.name", name, problems);
        if (!named("spec.workloadRef.podGroup", podGroup, problems) || !named) {
            return null;
        }
        var replicaKey = ref.get("podGroupReplicaKey");
        if (replicaKey != null && !(replicaKey instanceof String)) {
            problems.add("spec.workloadRef.podGroupReplicaKey: expected the name of the pod group's replica, got " + Quote.of(replicaKey));
            return null;
        }
        var replica = replicaKey == null ? "" : ((String) replicaKey).strip();
        // kube-scheduler holds each pod group all or nothing, and each replica of it on its own: that is the gang, and the
        // job. A Workload's two pod groups are two jobs, each with its own minCount (one key with two sizes would contradict
        // itself). JobObjectSizes reads the pod group back from this name.
        var job = name.strip() + "/" + podGroup.strip() + (replica.isEmpty() ? "" : "/" + replica);
        return new Found(job, JobSource.KUBE_WORKLOAD, OptionalInt.empty(),
                new JobSize.InObject("Workload", name.strip(), "spec.podGroups[" + podGroup.strip() + "].policy.gang.minCount"));
    }

    /**
     * One gang of a Workload: a pod group, or one replica of it ({@code replicaKey} "" for none).
     *
     * @param workload   the Workload's name
     * @param podGroup   the pod group's name in its {@code spec.podGroups}
     * @param replicaKey {@code spec.workloadRef.podGroupReplicaKey}, "" for none
     */
    public record WorkloadGang(String workload, String podGroup, String replicaKey) {

        /**
         * The gang a job read from {@code spec.workloadRef} names, from its name {@code workload/podGroup[/replicaKey]}:
         * Workload names are DNS subdomains and pod group names and replica keys DNS labels, none with a '/'.
         */
        public static Optional<WorkloadGang> of(JobMembership job) {
            if (job.source() != JobSource.KUBE_WORKLOAD) {
                return Optional.empty();
            }
            var parts = job.name().split("/", 3);
            return Optional.of(new WorkloadGang(parts[0], parts.length > 1 ? parts[1] : "", parts.length > 2 ? parts[2] : ""));
        }
    }

    /** The pod's role: hetgpu.io/role, else the first convention's in the order of {@link JobSource} that names one. */
    private static String role(Pod pod, Map<String, String> labels, Map<String, String> annotations) {
        var workloadRef = pod.getSpec() == null ? null : pod.getSpec().getAdditionalProperties().get(WORKLOAD_REF);
        var podGroup = workloadRef instanceof Map<?, ?> ref && ref.get("podGroup") instanceof String text ? text : null;
        for (var role : new String[] {labels.get(HetgpuKeys.POD_ROLE), podGroup, either(annotations, labels, VOLCANO_TASK),
                labels.get(HetgpuKeys.KUBEFLOW_ROLE), either(labels, annotations, JOBSET_REPLICATED_JOB)}) {
            if (role != null && !role.isBlank()) {
                return role.strip().toLowerCase(Locale.ROOT);
            }
        }
        return "";
    }

    /** {@code hetgpu.io/job-size}, as a label or an annotation; null when neither names one. */
    private static JobSize.Stated statedSize(Map<String, String> labels, Map<String, String> annotations, List<String> problems) {
        var key = HetgpuKeys.POD_JOB_SIZE;
        var label = labels.get(key);
        var annotation = annotations.get(key);
        if (label != null && annotation != null && !label.strip().equals(annotation.strip())) {
            problems.add(key + ": the label says " + Quote.of(label) + " and the annotation " + Quote.of(annotation) + "; give one");
            return null;
        }
        var text = label != null ? label : annotation;
        if (text == null) {
            return null;
        }
        try {
            int members = Integer.parseInt(text.strip());
            if (members >= 1) {
                return new JobSize.Stated(members, key);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        problems.add(key + ": expected the job's member count, a whole number of at least 1, got " + Quote.of(text));
        return null;
    }

    private static boolean named(String key, String value, List<String> problems) {
        if (value == null || value.isBlank()) {
            problems.add(key + ": expected the name of the pod's job or group, got " + Quote.of(value == null ? "" : value));
            return false;
        }
        return true;
    }

    private static OptionalInt index(String key, String text, List<String> problems) {
        if (text == null) {
            return OptionalInt.empty();
        }
        try {
            int index = Integer.parseInt(text.strip());
            if (index >= 0) {
                return OptionalInt.of(index);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        problems.add(key + ": expected a whole number of at least 0, got " + Quote.of(text));
        return OptionalInt.empty();
    }

    private static String either(Map<String, String> first, Map<String, String> second, String key) {
        var value = first.get(key);
        return value != null ? value : second.get(key);
    }

    private static Optional<OwnerReference> controller(Pod pod) {
        var owners = pod.getMetadata() == null ? null : pod.getMetadata().getOwnerReferences();
        if (owners == null) {
            return Optional.empty();
        }
        // A list as JSON gives it may hold nulls: a pod's reader names what is wrong, it does not throw.
        return owners.stream().filter(owner -> owner != null && Boolean.TRUE.equals(owner.getController()) && owner.getKind() != null)
                .findFirst();
    }
}
