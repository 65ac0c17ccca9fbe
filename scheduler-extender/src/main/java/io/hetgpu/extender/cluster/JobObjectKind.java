package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.hetgpu.gpu.Quote;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * A kind of object that holds a job's member count, where the API serves it, and how the count is read from it.
 *
 * @param name     how reasons name it, as {@link io.hetgpu.extender.job.JobMembershipReader} does: with its API group
 *                 where kinds share a name (three projects call theirs PodGroup)
 * @param kind     the API kind
 * @param group    the API group ("batch" for Jobs)
 * @param versions the versions to follow, preferred first: the first the cluster serves is watched
 * @param plural   the resource, for RBAC and the list's path
 * @param count    reads the count from one object
 */
record JobObjectKind(String name, String kind, String group, List<String> versions, String plural,
                     Function<GenericKubernetesResource, ObjectCount> count) {

    static final JobObjectKind VOLCANO_POD_GROUP = new JobObjectKind("PodGroup.scheduling.volcano.sh", "PodGroup",
            "scheduling.volcano.sh", List.of("v1beta1"), "podgroups", object -> whole(spec(object).get("minMember"), "spec.minMember"));
    static final JobObjectKind COSCHEDULING_POD_GROUP = new JobObjectKind("PodGroup.scheduling.x-k8s.io", "PodGroup",
            "scheduling.x-k8s.io", List.of("v1alpha1"), "podgroups", object -> whole(spec(object).get("minMember"), "spec.minMember"));
    /**
     * kube-scheduler's PodGroup: one per gang, made by a workload controller from a Workload's template. Alpha in
     * scheduling.k8s.io/v1alpha2 in Kubernetes 1.36; 1.37 serves it as v1alpha3 only (v1alpha2 dropped). Upstream has the
     * controller copy the template's policy into the PodGroup's own spec.schedulingPolicy (required, immutable), so that
     * copy is read and wins; only a PodGroup that states neither gang nor basic is sized by the template it names
     * (v1alpha2 spec.podGroupTemplateRef.workload.{workloadName, podGroupTemplateName}, v1alpha3
     * spec.workloadRef.{workloadName, templateName}), read from {@link #WORKLOAD_TEMPLATES}.
     */
    static final JobObjectKind KUBE_POD_GROUP = new JobObjectKind("PodGroup.scheduling.k8s.io", "PodGroup",
            "scheduling.k8s.io", List.of("v1alpha3", "v1alpha2"), "podgroups", JobObjectKind::kubePodGroup);
    /**
     * kube-scheduler's Workload of Kubernetes 1.35 (alpha), which pods name in spec.workloadRef. From 1.36 pods name a
     * PodGroup instead (spec.schedulingGroup), and the Workload is read only for the template a PodGroup names
     * ({@link #WORKLOAD_TEMPLATES}).
     */
    static final JobObjectKind WORKLOAD = new JobObjectKind("Workload", "Workload", "scheduling.k8s.io", List.of("v1alpha1"),
            "workloads", JobObjectKind::podGroups);
    /**
     * The most pod group templates (plain and composite, nested ones included) read of one Workload: upstream allows 8 per
     * list; a Workload with more is unreadable rather than walked without end.
     */
    static final int TEMPLATES_READ = 64;
    /**
     * kube-scheduler's Workload of 1.36 (v1alpha2) and 1.37 (v1alpha3): its spec.podGroupTemplates[], each with a
     * schedulingPolicy; 1.37 may also nest templates under spec.compositePodGroupTemplates[].podGroupTemplates (and
     * .compositePodGroupTemplates), template names being unique within the Workload.
     */
    static final JobObjectKind WORKLOAD_TEMPLATES = new JobObjectKind("Workload", "Workload", "scheduling.k8s.io",
            List.of("v1alpha3", "v1alpha2"), "workloads", object -> podGroupTemplates(object, TEMPLATES_READ));
    static final JobObjectKind JOB = new JobObjectKind("Job", "Job", "batch", List.of("v1"), "jobs", JobObjectKind::job);
    static final JobObjectKind JOBSET = new JobObjectKind("JobSet", "JobSet", "jobset.x-k8s.io", List.of("v1alpha2"), "jobsets",
            JobObjectKind::jobSet);
    /** Kubeflow's training jobs, each with its replica specs under a field of its own. */
    static final List<JobObjectKind> KUBEFLOW = List.of(
            training("TFJob", "tfjobs", "tfReplicaSpecs", "v1"),
            training("PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", "v1"),
            // The MPI operator's v2beta1, or the training operator's v1: one CRD, mpijobs.kubeflow.org, serves either.
            training("MPIJob", "mpijobs", "mpiReplicaSpecs", "v2beta1", "v1"),
            training("XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", "v1"),
            training("PaddleJob", "paddlejobs", "paddleReplicaSpecs", "v1"),
            training("JAXJob", "jaxjobs", "jaxReplicaSpecs", "v1"));

    static final List<JobObjectKind> ALL;

    static {
        var all = new ArrayList<>(List.of(VOLCANO_POD_GROUP, COSCHEDULING_POD_GROUP, KUBE_POD_GROUP, WORKLOAD, WORKLOAD_TEMPLATES, JOB, JOBSET));
        all.addAll(KUBEFLOW);
        ALL = List.copyOf(all);
    }

    JobObjectKind {
        versions = List.copyOf(versions);
    }

    /** The kind and the versions followed, as a reason names them: "Workload (scheduling.k8s.io/v1alpha1)". */
    String served() {
        return kind + " (" + String.join(" or ", versions.stream().map(version -> apiVersion(version)).toList()) + ")";
    }

    String apiVersion(String version) {
        return group + "/" + version;
    }

    /**
     * The first of {@link #versions} that API discovery lists this kind under ("" when none): {@code discovery} answers an
     * {@code apiVersion}'s resources, empty where the API server does not serve that group and version at all.
     */
    String servedVersion(Function<String, Optional<APIResourceList>> discovery) {
        for (var version : versions) {
            if (discovery.apply(apiVersion(version)).map(list -> list.getResources().stream()
                    .anyMatch(resource -> plural.equals(resource.getName()) && kind.equals(resource.getKind()))).orElse(false)) {
                return version;
            }
        }
        return "";
    }

    /** The resource as RBAC names it: "podgroups.scheduling.volcano.sh". */
    String resource() {
        return plural + "." + group;
    }

    ResourceDefinitionContext context(String version) {
        return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withKind(kind)
                .withPlural(plural).withNamespaced(true).build();
    }

    private static JobObjectKind training(String kind, String plural, String field, String... versions) {
        return new JobObjectKind(kind, kind, "kubeflow.org", List.of(versions), plural, object -> replicaSpecs(object, field));
    }

    /** A Workload's pod groups, each with its gang's minCount. */
    private static ObjectCount podGroups(GenericKubernetesResource object) {
        if (!(spec(object).get("podGroups") instanceof List<?> groups) || groups.isEmpty()) {
            return new ObjectCount.Unreadable("has no spec.podGroups");
        }
        var counts = new HashMap<String, ObjectCount>();
        for (int i = 0; i < groups.size(); i++) {
            var group = groups.get(i) instanceof Map<?, ?> map ? map : Map.of();
            if (!(group.get("name") instanceof String name) || name.isBlank()) {
                continue;
            }
            counts.put(name, gang(group.get("policy"), "spec.podGroups[" + name + "].policy"));
        }
        return new ObjectCount.ByPodGroup(counts);
    }

    /**
     * A kube-scheduler PodGroup's count: its own policy's gang minCount; where it states no policy, the template it names.
     */
    private static ObjectCount kubePodGroup(GenericKubernetesResource object) {
        var spec = spec(object);
        var policy = spec.get("schedulingPolicy") instanceof Map<?, ?> map ? map : Map.of();
        if (policy.containsKey("gang") || policy.containsKey("basic")) {
            return gang(policy, "spec.schedulingPolicy");
        }
        if (spec.get("workloadRef") instanceof Map<?, ?> ref) {
            return templateRef(ref, "spec.workloadRef", "templateName");
        }
        if (spec.get("podGroupTemplateRef") instanceof Map<?, ?> ref && ref.get("workload") instanceof Map<?, ?> workload) {
            return templateRef(workload, "spec.podGroupTemplateRef.workload", "podGroupTemplateName");
        }
        return gang(policy, "spec.schedulingPolicy");
    }

    private static ObjectCount templateRef(Map<?, ?> ref, String field, String templateKey) {
        if (!(ref.get("workloadName") instanceof String workload) || workload.isBlank()) {
            return new ObjectCount.Unreadable("states no spec.schedulingPolicy and its " + field + ".workloadName is "
                    + Quote.of(ref.get("workloadName")) + ": expected a Workload's name");
        }
        if (!(ref.get(templateKey) instanceof String template) || template.isBlank()) {
            return new ObjectCount.Unreadable("states no spec.schedulingPolicy and its " + field + "." + templateKey + " is "
                    + Quote.of(ref.get(templateKey)) + ": expected a template's name");
        }
        return new ObjectCount.FromTemplate(workload, template, field);
    }

    /**
     * A 1.36/1.37 Workload's pod group templates, each with its gang's minCount, at most {@code bound} templates read
     * (composite ones counted too).
     */
    static ObjectCount podGroupTemplates(GenericKubernetesResource object, int bound) {
        var counts = new HashMap<String, ObjectCount>();
        var lists = new ArrayList<Map.Entry<String, Map<?, ?>>>();
        lists.add(Map.entry("spec", spec(object)));
        int read = 0;
        for (int next = 0; next < lists.size(); next++) {
            var field = lists.get(next).getKey();
            var holder = lists.get(next).getValue();
            var templates = holder.get("podGroupTemplates") instanceof List<?> list ? list : List.of();
            var composites = holder.get("compositePodGroupTemplates") instanceof List<?> list ? list : List.of();
            read += templates.size() + composites.size();
            if (read > bound) {
                return new ObjectCount.Unreadable("has more than " + bound + " pod group templates (under " + field
                        + "), more than hetgpu reads of one Workload");
            }
            for (int i = 0; i < templates.size(); i++) {
                var template = templates.get(i) instanceof Map<?, ?> map ? map : Map.of();
                if (template.get("name") instanceof String name && !name.isBlank()) {
                    counts.putIfAbsent(name, gang(template.get("schedulingPolicy"),
                            field + ".podGroupTemplates[" + Quote.cut(name, 100) + "].schedulingPolicy"));
                }
            }
            for (int i = 0; i < composites.size(); i++) {
                var composite = composites.get(i) instanceof Map<?, ?> map ? map : Map.of();
                var name = composite.get("name") instanceof String given ? Quote.cut(given, 100) : String.valueOf(i);
                lists.add(Map.entry(field + ".compositePodGroupTemplates[" + name + "]", composite));
            }
        }
        if (counts.isEmpty()) {
            return new ObjectCount.Unreadable("has no named template in spec.podGroupTemplates");
        }
        return new ObjectCount.ByPodGroup(counts);
    }

    /** A scheduling policy's gang minCount; a basic policy holds no gang. */
    private static ObjectCount gang(Object policy, String field) {
        var map = policy instanceof Map<?, ?> given ? given : Map.of();
        if (map.get("gang") instanceof Map<?, ?> gang) {
            return whole(gang.get("minCount"), field + ".gang.minCount");
        }
        if (map.containsKey("basic")) {
            return new ObjectCount.Unreadable("has a basic scheduling policy (" + field + ".basic), no gang and so no minCount");
        }
        return new ObjectCount.Unreadable("has no " + field + ".gang.minCount");
    }

    /**
     * The pods of a Job that run at once: its completions, or its parallelism where that is smaller (a Job of 8
     * completions and parallelism 2 runs 2 pods at a time, and they are the gang).
     */
    private static ObjectCount job(GenericKubernetesResource object) {
        var spec = spec(object);
        if (spec.get("completions") == null) {
            return new ObjectCount.Unreadable("has no spec.completions");
        }
        return atOnce(spec, "spec");
    }

    /** min(completions, parallelism) of a Job's spec (parallelism defaults to 1, completions to parallelism). */
    private static ObjectCount atOnce(Map<?, ?> spec, String field) {
        var parallelism = spec.get("parallelism");
        if (parallelism != null && Long.valueOf(0).equals(integral(parallelism))) {
            return new ObjectCount.Unreadable("has " + field + ".parallelism 0: it runs no pods now");
        }
        var pods = parallelism == null ? new ObjectCount.Members(1) : whole(parallelism, field + ".parallelism");
        if (!(pods instanceof ObjectCount.Members running) || spec.get("completions") == null) {
            return pods;
        }
        var completions = whole(spec.get("completions"), field + ".completions");
        return completions instanceof ObjectCount.Members done ? new ObjectCount.Members(Math.min(done.members(), running.members())) : completions;
    }

    /**
     * A JobSet's pods: for each replicated job, its replicas (default 1) times the pods each of its Jobs runs at once. A
     * JobSet whose replicated jobs start in stages (dependsOn, as a TrainJob's initializers before its trainer) has no
     * one count of pods that run together.
     */
    private static ObjectCount jobSet(GenericKubernetesResource object) {
        if (!(spec(object).get("replicatedJobs") instanceof List<?> jobs) || jobs.isEmpty()) {
            return new ObjectCount.Unreadable("has no spec.replicatedJobs");
        }
        long total = 0;
        for (int i = 0; i < jobs.size(); i++) {
            var job = jobs.get(i) instanceof Map<?, ?> map ? map : Map.of();
            var field = "spec.replicatedJobs[" + (job.get("name") instanceof String name ? name : String.valueOf(i)) + "]";
            if (job.get("dependsOn") instanceof List<?> after && !after.isEmpty()) {
                return new ObjectCount.Unreadable("starts its replicated jobs in stages (" + field + ".dependsOn): its pods do not all run at once");
            }
            var replicas = job.get("replicas") == null ? new ObjectCount.Members(1) : whole(job.get("replicas"), field + ".replicas");
            if (!(replicas instanceof ObjectCount.Members copies)) {
                return replicas;
            }
            var template = job.get("template") instanceof Map<?, ?> map ? map : Map.of();
            var pods = atOnce(template.get("spec") instanceof Map<?, ?> spec ? spec : Map.of(), field + ".template.spec");
            if (!(pods instanceof ObjectCount.Members each)) {
                return pods;
            }
            total += (long) copies.members() * each.members();
        }
        return total > Integer.MAX_VALUE ? new ObjectCount.Unreadable("has " + total + " pods, more than any job can") : new ObjectCount.Members((int) total);
    }

    /**
     * A training job's pods: the sum of its replica specs' replicas (each defaults to 1, as the operators default it). An
     * MPIJob whose launcher waits for its workers (launcherCreationPolicy WaitForWorkersReady) starts as its workers alone.
     */
    private static ObjectCount replicaSpecs(GenericKubernetesResource object, String field) {
        var spec = spec(object);
        if (!(spec.get(field) instanceof Map<?, ?> specs) || specs.isEmpty()) {
            return new ObjectCount.Unreadable("has no spec." + field);
        }
        boolean launcherLater = "WaitForWorkersReady".equals(spec.get("launcherCreationPolicy"));
        long total = 0;
        for (var type : new TreeSet<>(specs.keySet().stream().map(String::valueOf).toList())) {
            if (launcherLater && type.equalsIgnoreCase("launcher")) {
                continue;
            }
            var replicaSpec = specs.get(type) instanceof Map<?, ?> map ? map : Map.of();
            var replicas = replicaSpec.get("replicas");
            var number = replicas == null ? Long.valueOf(1) : integral(replicas);
            if (number == null || number < 0 || number > Integer.MAX_VALUE) {
                return new ObjectCount.Unreadable("has spec." + field + "." + type + ".replicas " + Quote.of(replicas)
                        + ": expected a whole number of at least 0");
            }
            total += number;
        }
        if (total < 1) {
            return new ObjectCount.Unreadable("has no replicas in spec." + field);
        }
        return total > Integer.MAX_VALUE ? new ObjectCount.Unreadable("has " + total + " replicas, more than any job can") : new ObjectCount.Members((int) total);
    }

    private static Map<?, ?> spec(GenericKubernetesResource object) {
        return object.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec ? spec : Map.of();
    }

    /** A whole number of at least 1, as a count; anything else unreadable, naming the field and quoting the value. */
    static ObjectCount whole(Object value, String field) {
        if (value == null) {
            return new ObjectCount.Unreadable("has no " + field);
        }
        var number = integral(value);
        if (number == null || number < 1 || number > Integer.MAX_VALUE) {
            return new ObjectCount.Unreadable("has " + field + " " + Quote.of(value) + ": expected a whole number of at least 1");
        }
        return new ObjectCount.Members(number.intValue());
    }

    /** The value as a whole number where JSON gave one (Jackson reads one as Integer, Long or BigInteger); else null. */
    private static Long integral(Object value) {
        return switch (value) {
            case Integer i -> (long) i;
            case Long l -> l;
            case BigInteger big when big.bitLength() < 63 -> big.longValue();
            default -> null;
        };
    }
}
