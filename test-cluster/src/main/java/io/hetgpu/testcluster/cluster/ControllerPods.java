package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The pods a workload's controllers run at once, as they write them: a bare Pod, a Job (an Indexed Job's completion
 * index), a JobSet's Jobs, a Kubeflow training job's replicas (TFJob, PyTorchJob, MPIJob, …), a StatefulSet, a
 * Deployment or ReplicaSet, each with the names, labels, annotations and controller its controller gives them, and
 * nothing hetgpu adds. hetgpu reads a pod's job from exactly these keys, so a pod made here is read as the cluster's
 * would be.
 *
 * <p>Where a controller draws a random suffix (a Job's or ReplicaSet's pods) one is derived from the pod's place instead,
 * so the same workload always gives the same pods. What is left out: what admission adds (a PriorityClass's value; see
 * {@code PriorityAdmission}), and the pods a controller creates later (a Job's completions beyond its parallelism).
 */
public final class ControllerPods {

    /** The Kubeflow training operator's label for the controller that made the pod. */
    public static final String KUBEFLOW_OPERATOR = "training.kubeflow.org/operator-name";
    private static final String KUBEFLOW_GROUP = "kubeflow.org";
    private static final String JOBSET_GROUP = "jobset.x-k8s.io";

    /**
     * The most pods one workload may ask for at once here: more than a training job of a real cluster runs, few enough that
     * a typo in a count ({@code parallelism: 100000000}) is refused, naming the field, instead of filling the heap.
     */
    public static final int MAX_PODS = 10_000;
    /**
     * The most Jobs one workload's JobSet may ask for: each Job is built before its pods are, so a count of Jobs of no pods
     * ({@code replicas: 2000000000} of {@code parallelism: 0}) is refused here rather than built for hours.
     */
    public static final int MAX_JOBS = 10_000;

    private ControllerPods() {
    }

    /** Whether the object is of a kind whose controller runs pods (or is a pod). */
    public static boolean makesPods(HasMetadata object) {
        var kind = object.getKind();
        var group = group(object);
        return switch (group) {
            case "" -> "Pod".equals(kind);
            case "batch" -> "Job".equals(kind);
            case "apps" -> "StatefulSet".equals(kind) || "Deployment".equals(kind) || "ReplicaSet".equals(kind);
            case JOBSET_GROUP -> "JobSet".equals(kind);
            case KUBEFLOW_GROUP -> replicaSpecsField(object).isPresent();
            default -> false;
        };
    }

    /**
     * The pods the object's controller runs at once, in the order it creates them; none for an object that makes no pods.
     *
     * @throws IllegalArgumentException when the object is of a kind that makes pods but cannot be read as one (the field
     *                                  and value named)
     */
    public static List<Pod> of(HasMetadata object) {
        if (!makesPods(object)) {
            return List.of();
        }
        var name = object.getMetadata().getName();
        return switch (group(object)) {
            case "" -> List.of(typed(object, Pod.class));
            case "batch" -> job(typed(object, Job.class), Map.of());
            case "apps" -> switch (object.getKind()) {
                case "StatefulSet" -> statefulSet(typed(object, StatefulSet.class));
                case "Deployment" -> deployment(typed(object, Deployment.class));
                default -> replicaSet(typed(object, ReplicaSet.class), name, owner("apps/v1", "ReplicaSet", object.getMetadata()));
            };
            case JOBSET_GROUP -> jobSet(generic(object));
            default -> trainingJob(generic(object));
        };
    }

    /**
     * How many Jobs the object's controller creates to run its pods: a JobSet's, each of its replicated Jobs times its
     * replicas; none for any other object. Read from the counts alone, nothing built, so that a count of many Jobs can be
     * refused before they are.
     *
     * @throws IllegalArgumentException when a JobSet's count cannot be read (the field and value named)
     */
    public static long jobsOf(HasMetadata object) {
        if (!makesPods(object) || !JOBSET_GROUP.equals(group(object))) {
            return 0;
        }
        return replicatedJobs(generic(object)).stream().mapToLong(ReplicatedJob::replicas).sum();
    }

    /**
     * The pod the training operator creates for replica {@code index} of {@code replicaType} of a training job ({@code job}:
     * its name, namespace and UID): named {@code <job>-<type>-<index>}, the type in lower case, labelled with the job, the
     * type and the index, owned by the job.
     */
    public static Pod trainingPod(String apiVersion, String kind, ObjectMeta job, String replicaType, int index, PodTemplateSpec template) {
        var type = replicaType.toLowerCase(Locale.ROOT);
        var labels = new LinkedHashMap<String, String>();
        labels.put(HetgpuKeys.KUBEFLOW_JOB, job.getName());
        labels.put(HetgpuKeys.KUBEFLOW_ROLE, type);
        labels.put(JobMembershipReader.KUBEFLOW_INDEX, Integer.toString(index));
        labels.put(KUBEFLOW_OPERATOR, kind.toLowerCase(Locale.ROOT) + "-controller");
        return pod(template, job.getName() + "-" + type + "-" + index, job.getNamespace(), labels, Map.of(), owner(apiVersion, kind, job));
    }

    private static List<Pod> trainingJob(GenericKubernetesResource object) {
        var field = replicaSpecsField(object).orElseThrow();
        var specs = (Map<?, ?>) spec(object).get(field);
        var pods = new ArrayList<Pod>();
        var meta = object.getMetadata();
        for (var entry : specs.entrySet()) {
            var type = String.valueOf(entry.getKey());
            var path = "spec." + field + "." + type;
            var replica = entry.getValue() instanceof Map<?, ?> map ? map : Map.of();
            long replicas = count(object, replica.get("replicas"), path + ".replicas");
            room(object, path + ".replicas", pods.size(), replicas);
            var template = Serialization.jsonMapper().convertValue(replica.get("template"), PodTemplateSpec.class);
            if (template == null || template.getSpec() == null) {
                throw new IllegalArgumentException(describe(object) + ": " + path + ".template.spec is missing");
            }
            for (int i = 0; i < replicas; i++) {
                pods.add(trainingPod(object.getApiVersion(), object.getKind(), meta, type, i, template));
            }
        }
        return pods;
    }

    /** A JobSet's Jobs, {@code <jobset>-<replicated job>-<index>}, each running its pods with the JobSet's keys on them. */
    private static List<Pod> jobSet(GenericKubernetesResource object) {
        var meta = object.getMetadata();
        var pods = new ArrayList<Pod>();
        for (var replicatedJob : replicatedJobs(object)) {
            var jobName = replicatedJob.name();
            long replicas = replicatedJob.replicas();
            var template = Serialization.jsonMapper().convertValue(replicatedJob.template(), Job.class);
            if (template == null || template.getSpec() == null) {
                throw new IllegalArgumentException(describe(object) + ": spec.replicatedJobs[" + jobName + "].template.spec is missing");
            }
            for (int j = 0; j < replicas; j++) {
                var keys = Map.of(JobMembershipReader.JOBSET_NAME, meta.getName(), JobMembershipReader.JOBSET_REPLICATED_JOB, jobName,
                        JobMembershipReader.JOBSET_JOB_INDEX, Integer.toString(j));
                var job = new io.fabric8.kubernetes.api.model.batch.v1.JobBuilder(template).editOrNewMetadata()
                        .withName(meta.getName() + "-" + jobName + "-" + j).withNamespace(meta.getNamespace())
                        .withUid(uuid(meta.getNamespace() + "/" + meta.getName() + "-" + jobName + "-" + j)).endMetadata().build();
                var jobPods = job(job, keys);
                room(object, "spec.replicatedJobs[" + jobName + "]", pods.size(), jobPods.size());
                pods.addAll(jobPods);
            }
        }
        return pods;
    }

    /** One entry of a JobSet's {@code spec.replicatedJobs}: its name, how many Jobs of it, and their template as written. */
    private record ReplicatedJob(String name, long replicas, Object template) {
    }

    /** The JobSet's replicated Jobs, refused where they come to more than {@link #MAX_JOBS} Jobs, naming the count that does. */
    private static List<ReplicatedJob> replicatedJobs(GenericKubernetesResource object) {
        if (!(spec(object).get("replicatedJobs") instanceof List<?> replicated)) {
            throw new IllegalArgumentException(describe(object) + ": spec.replicatedJobs is missing");
        }
        var entries = new ArrayList<ReplicatedJob>();
        long jobs = 0;
        for (var each : replicated) {
            var replicatedJob = each instanceof Map<?, ?> map ? map : Map.of();
            var jobName = String.valueOf(replicatedJob.get("name"));
            var field = "spec.replicatedJobs[" + jobName + "].replicas";
            long replicas = count(object, replicatedJob.get("replicas"), field);
            if (replicas > MAX_JOBS - jobs) {
                throw new IllegalArgumentException(describe(object) + ": " + field + ": " + replicas + " Jobs"
                        + (jobs > 0 ? " (" + (jobs + replicas) + " with the ones before)" : "") + ", more than the " + MAX_JOBS
                        + " Jobs of one workload this expands");
            }
            jobs += replicas;
            entries.add(new ReplicatedJob(jobName, replicas, replicatedJob.get("template")));
        }
        return entries;
    }

    /**
     * A Job's pods running at once: its parallelism (1 when unset), no more than its completions. An Indexed Job's pods
     * carry their completion index as label and annotation and are named by it.
     *
     * @param keys labels and annotations a controller above the Job adds (a JobSet's)
     */
    private static List<Pod> job(Job job, Map<String, String> keys) {
        var spec = job.getSpec();
        requireTemplate(job, spec == null ? null : spec.getTemplate());
        int parallelism = spec.getParallelism() == null ? 1 : spec.getParallelism();
        int atOnce = spec.getCompletions() == null ? parallelism : Math.min(parallelism, spec.getCompletions());
        room(job, spec.getParallelism() == null ? "spec.completions" : "spec.parallelism", 0, atOnce);
        boolean indexed = "Indexed".equals(spec.getCompletionMode());
        var meta = job.getMetadata();
        var pods = new ArrayList<Pod>();
        for (int i = 0; i < atOnce; i++) {
            var labels = new LinkedHashMap<String, String>();
            labels.put(JobMembershipReader.JOB_NAME, meta.getName());
            labels.put(JobMembershipReader.JOB_NAME_LEGACY, meta.getName());
            labels.put("batch.kubernetes.io/controller-uid", uidOf(meta));
            var annotations = new LinkedHashMap<String, String>(keys);
            labels.putAll(keys);
            var name = meta.getName() + "-";
            if (indexed) {
                labels.put(JobMembershipReader.JOB_COMPLETION_INDEX, Integer.toString(i));
                annotations.put(JobMembershipReader.JOB_COMPLETION_INDEX, Integer.toString(i));
                name += i + "-";
            }
            var pod = pod(spec.getTemplate(), name + suffix(meta.getNamespace() + "/" + name + i), meta.getNamespace(), labels, annotations,
                    owner("batch/v1", "Job", meta));
            if (indexed) {
                // The Job controller names an Indexed Job's pod's host by its index, for the headless Service the samples use.
                pod.getSpec().setHostname(meta.getName() + "-" + i);
            }
            pods.add(pod);
        }
        return pods;
    }

    private static List<Pod> statefulSet(StatefulSet set) {
        var meta = set.getMetadata();
        var spec = set.getSpec();
        requireTemplate(set, spec == null ? null : spec.getTemplate());
        int replicas = spec.getReplicas() == null ? 1 : spec.getReplicas();
        room(set, "spec.replicas", 0, replicas);
        var pods = new ArrayList<Pod>();
        for (int i = 0; i < replicas; i++) {
            var name = meta.getName() + "-" + i;
            var pod = pod(spec.getTemplate(), name, meta.getNamespace(),
                    Map.of("apps.kubernetes.io/pod-index", Integer.toString(i), "statefulset.kubernetes.io/pod-name", name), Map.of(),
                    owner("apps/v1", "StatefulSet", meta));
            pod.getSpec().setHostname(name);
            pod.getSpec().setSubdomain(spec.getServiceName());
            pods.add(pod);
        }
        return pods;
    }

    /** A Deployment's ReplicaSet, {@code <deployment>-<template hash>}, and its pods. */
    private static List<Pod> deployment(Deployment deployment) {
        var meta = deployment.getMetadata();
        var spec = deployment.getSpec();
        requireTemplate(deployment, spec == null ? null : spec.getTemplate());
        var hash = suffix(meta.getNamespace() + "/" + meta.getName()) + suffix(meta.getName());
        var template = new io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder(spec.getTemplate()).editOrNewMetadata()
                .addToLabels("pod-template-hash", hash).endMetadata().build();
        var replicaSetMeta = new ObjectMeta();
        replicaSetMeta.setName(meta.getName() + "-" + hash);
        replicaSetMeta.setNamespace(meta.getNamespace());
        replicaSetMeta.setUid(uuid(meta.getNamespace() + "/" + replicaSetMeta.getName()));
        var replicaSet = new io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder().withMetadata(replicaSetMeta).withNewSpec()
                .withReplicas(spec.getReplicas() == null ? 1 : spec.getReplicas()).withTemplate(template).endSpec().build();
        return replicaSet(replicaSet, replicaSetMeta.getName(), owner("apps/v1", "ReplicaSet", replicaSetMeta));
    }

    private static List<Pod> replicaSet(ReplicaSet set, String name, io.fabric8.kubernetes.api.model.OwnerReference owner) {
        var spec = set.getSpec();
        requireTemplate(set, spec == null ? null : spec.getTemplate());
        int replicas = spec.getReplicas() == null ? 1 : spec.getReplicas();
        room(set, "spec.replicas", 0, replicas);
        var pods = new ArrayList<Pod>();
        for (int i = 0; i < replicas; i++) {
            pods.add(pod(spec.getTemplate(), name + "-" + suffix(set.getMetadata().getNamespace() + "/" + name + i),
                    set.getMetadata().getNamespace(), Map.of(), Map.of(), owner));
        }
        return pods;
    }

    /** Refuses {@code more} pods beside the {@code made} ones when that is over {@link #MAX_PODS}, naming the field that asks. */
    private static void room(HasMetadata object, String field, int made, long more) {
        if (made + more > MAX_PODS) {
            throw new IllegalArgumentException(describe(object) + ": " + field + ": " + (made + more) + " pods at once, more than the "
                    + MAX_PODS + " of one workload this places");
        }
    }

    private static void requireTemplate(HasMetadata object, PodTemplateSpec template) {
        if (template == null || template.getSpec() == null) {
            throw new IllegalArgumentException(describe(object) + ": spec.template.spec is missing");
        }
    }

    /** A pod from its template, with the controller's name, keys and owner; its UID derived from where it is. */
    private static Pod pod(PodTemplateSpec template, String name, String namespace, Map<String, String> labels,
                           Map<String, String> annotations, io.fabric8.kubernetes.api.model.OwnerReference owner) {
        var metadata = template.getMetadata() == null ? new ObjectMeta() : template.getMetadata();
        var spec = template.getSpec() == null ? new PodSpec() : template.getSpec();
        return new PodBuilder().withNewMetadataLike(metadata).withName(name).withNamespace(namespace).withUid(uuid(namespace + "/" + name))
                .addToLabels(labels).addToAnnotations(annotations).withOwnerReferences(owner).endMetadata()
                .withSpec(new io.fabric8.kubernetes.api.model.PodSpecBuilder(spec).build())
                .withNewStatus().withPhase("Pending").endStatus().build();
    }

    private static io.fabric8.kubernetes.api.model.OwnerReference owner(String apiVersion, String kind, ObjectMeta meta) {
        return new OwnerReferenceBuilder().withApiVersion(apiVersion).withKind(kind).withName(meta.getName()).withUid(uidOf(meta))
                .withController(true).withBlockOwnerDeletion(true).build();
    }

    /** The object's UID, or one derived from its namespace and name for an object not created yet. */
    private static String uidOf(ObjectMeta meta) {
        return meta.getUid() != null && !meta.getUid().isEmpty() ? meta.getUid() : uuid(meta.getNamespace() + "/" + meta.getName());
    }

    private static String uuid(String of) {
        return UUID.nameUUIDFromBytes(of.getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** Five characters of the alphabet controllers draw their suffixes from, derived from {@code of}. */
    private static String suffix(String of) {
        var alphabet = "bcdfghjklmnpqrstvwxz2456789";
        long hash = UUID.nameUUIDFromBytes(of.getBytes(StandardCharsets.UTF_8)).getMostSignificantBits() & Long.MAX_VALUE;
        var text = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            text.append(alphabet.charAt((int) (hash % alphabet.length())));
            hash /= alphabet.length();
        }
        return text.toString();
    }

    private static Optional<String> replicaSpecsField(HasMetadata object) {
        if (!(object instanceof GenericKubernetesResource generic)) {
            return Optional.empty();
        }
        return spec(generic).keySet().stream().map(String::valueOf).filter(key -> key.endsWith("ReplicaSpecs")).findFirst()
                .filter(field -> spec(generic).get(field) instanceof Map<?, ?>);
    }

    /**
     * A count as written, 1 where none is; one past what an int holds ({@code 3000000000}) is read as it is, for the limit
     * it is over to refuse it, rather than as not a number.
     */
    private static long count(HasMetadata object, Object value, String field) {
        if (value == null) {
            return 1;
        }
        // Up to 10^18, so that a sum of it and the counts before it stays a long.
        if (value instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue()) && number.doubleValue() >= 0
                && number.doubleValue() <= 1e18) {
            return number.longValue();
        }
        throw new IllegalArgumentException(describe(object) + ": " + field + ": expected a whole number of at least 0, got " + Quote.of(value));
    }

    private static Map<?, ?> spec(GenericKubernetesResource object) {
        return object.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec ? spec : Map.of();
    }

    private static String group(HasMetadata object) {
        var apiVersion = object.getApiVersion() == null ? "" : object.getApiVersion();
        return apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
    }

    private static GenericKubernetesResource generic(HasMetadata object) {
        return object instanceof GenericKubernetesResource generic ? generic
                : Serialization.jsonMapper().convertValue(object, GenericKubernetesResource.class);
    }

    private static <T extends HasMetadata> T typed(HasMetadata object, Class<T> type) {
        if (type.isInstance(object)) {
            return type.cast(object);
        }
        try {
            return Serialization.jsonMapper().convertValue(object, type);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(describe(object) + " cannot be read as a " + type.getSimpleName() + ": "
                    + e.getMessage().lines().findFirst().orElse(""), e);
        }
    }

    private static String describe(HasMetadata object) {
        return object.getKind() + " " + object.getMetadata().getName();
    }
}
