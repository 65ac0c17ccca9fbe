package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSchedulingGroupBuilder;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * kube-scheduler's PodGroups of 1.36 (v1alpha2) and 1.37 (v1alpha3) and the Workload templates they are made from, read
 * from objects in memory through the one rule ({@link JobObjectCounts}) the informers and listings share.
 */
class JobObjectKindTest {

    private static final String NS = "ml";

    private final Map<JobObjectKind, Map<String, ObjectCount>> objects = new HashMap<>();

    @Test
    void aPodGroupsOwnGangPolicyWinsOverTheTemplateItNames() {
        podGroup("train-0", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 3)),
                "workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(template("workers", 8))));

        assertThat(members("train-0")).hasValue(3);
    }

    @Test
    void aKubernetes137PodGroupWithoutAPolicyIsSizedByItsWorkloadTemplate() {
        podGroup("train-0", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(template("ps", 1), template("workers", 8))));

        assertThat(members("train-0")).hasValue(8);
    }

    @Test
    void aKubernetes136PodGroupWithoutAPolicyIsSizedByItsWorkloadTemplate() {
        podGroup("train-0", Map.of("podGroupTemplateRef", Map.of("workload",
                Map.of("workloadName", "train", "podGroupTemplateName", "workers"))));
        workload("v1alpha2", "train", Map.of("podGroupTemplates", List.of(template("workers", 6))));

        assertThat(members("train-0")).hasValue(6);
    }

    @Test
    void aTemplateNestedInACompositeTemplateIsFound() {
        podGroup("train-0", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("compositePodGroupTemplates", List.of(Map.of("name", "replica",
                "podGroupTemplates", List.of(template("leader", 1), template("workers", 4))))));

        assertThat(members("train-0")).hasValue(4);
    }

    @Test
    void aMissingTemplateOrWorkloadSaysWhich() {
        podGroup("train-0", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", "chief")));
        podGroup("other-0", Map.of("workloadRef", Map.of("workloadName", "absent", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(template("ps", 1), template("workers", 8))));

        assertThat(why("train-0")).hasValue("PodGroup.scheduling.k8s.io \"train-0\" in namespace ml states no spec.schedulingPolicy of its "
                + "own and was made from template \"chief\" of Workload \"train\" (spec.workloadRef): Workload \"train\" in namespace ml "
                + "has no template \"chief\" in spec.podGroupTemplates (it has ps, workers)");
        assertThat(why("other-0")).hasValue("PodGroup.scheduling.k8s.io \"other-0\" in namespace ml states no spec.schedulingPolicy of its "
                + "own and was made from template \"workers\" of Workload \"absent\" (spec.workloadRef): Workload \"absent\" not found in namespace ml");
    }

    @Test
    void aTemplateWithABasicPolicyHasNoCount() {
        podGroup("train-0", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(Map.of("name", "workers", "schedulingPolicy", Map.of("basic", Map.of())))));

        assertThat(why("train-0")).get().asString().endsWith("Workload \"train\" in namespace ml has a basic scheduling policy "
                + "(spec.podGroupTemplates[workers].schedulingPolicy.basic), no gang and so no minCount");
        assertThat(members("train-0")).isEmpty();
    }

    @Test
    void aPodGroupWithABasicPolicyIsNotSizedByItsTemplate() {
        podGroup("train-0", Map.of("schedulingPolicy", Map.of("basic", Map.of()),
                "workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(template("workers", 8))));

        assertThat(why("train-0")).hasValue("PodGroup.scheduling.k8s.io \"train-0\" in namespace ml has a basic scheduling policy "
                + "(spec.schedulingPolicy.basic), no gang and so no minCount");
    }

    @Test
    void aBadReferenceOrTemplateCountNamesTheFieldAndValue() {
        podGroup("blank", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", " ")));
        podGroup("zero", Map.of("workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        workload("v1alpha3", "train", Map.of("podGroupTemplates", List.of(template("workers", 0))));

        assertThat(why("blank")).hasValue("PodGroup.scheduling.k8s.io \"blank\" in namespace ml states no spec.schedulingPolicy and its "
                + "spec.workloadRef.templateName is \" \": expected a template's name");
        assertThat(why("zero")).get().asString().endsWith("Workload \"train\" in namespace ml has "
                + "spec.podGroupTemplates[workers].schedulingPolicy.gang.minCount \"0\": expected a whole number of at least 1");
    }

    @Test
    void aWorkloadWithMoreTemplatesThanTheBoundIsUnreadableNotWalked() {
        var many = IntStream.range(0, JobObjectKind.TEMPLATES_READ + 1).mapToObj(i -> template("t" + i, 2)).toList();
        var composites = IntStream.range(0, JobObjectKind.TEMPLATES_READ).mapToObj(i -> Map.<String, Object>of("name", "c" + i,
                "podGroupTemplates", List.of(template("n" + i, 2)))).toList();

        assertThat(JobObjectKind.podGroupTemplates(object("v1alpha3", "w", Map.of("podGroupTemplates", many)), JobObjectKind.TEMPLATES_READ))
                .isEqualTo(new ObjectCount.Unreadable("has more than 64 pod group templates (under spec), more than hetgpu reads of one Workload"));
        assertThat(JobObjectKind.podGroupTemplates(object("v1alpha3", "w", Map.of("compositePodGroupTemplates", composites)), 10))
                .isInstanceOf(ObjectCount.Unreadable.class);
        assertThat(JobObjectKind.podGroupTemplates(object("v1alpha3", "w", Map.of("podGroupTemplates", many.subList(0, 8))), 8))
                .isInstanceOf(ObjectCount.ByPodGroup.class);
    }

    private void podGroup(String name, Map<String, Object> spec) {
        put(JobObjectKind.KUBE_POD_GROUP, object("v1alpha3", name, spec));
    }

    private void workload(String version, String name, Map<String, Object> spec) {
        put(JobObjectKind.WORKLOAD_TEMPLATES, object(version, name, spec));
    }

    private void put(JobObjectKind kind, GenericKubernetesResource object) {
        objects.computeIfAbsent(kind, any -> new HashMap<>()).put(object.getMetadata().getName(), kind.count().apply(object));
    }

    private static Map<String, Object> template(String name, int minCount) {
        return Map.of("name", name, "schedulingPolicy", Map.of("gang", Map.of("minCount", minCount)));
    }

    private static GenericKubernetesResource object(String version, String name, Map<String, Object> spec) {
        var object = new GenericKubernetesResource();
        object.setApiVersion("scheduling.k8s.io/" + version);
        object.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
        object.setAdditionalProperty("spec", spec);
        return object;
    }

    private Function<JobObjectKind, JobObjectCounts.KindTable> tables() {
        return kind -> new JobObjectCounts.KindTable() {
            @Override
            public String standing() {
                return null;
            }

            @Override
            public ObjectCount count(String namespace, String name) {
                return NS.equals(namespace) ? objects.getOrDefault(kind, Map.of()).get(name) : null;
            }
        };
    }

    private OptionalInt members(String podGroup) {
        return JobObjectCounts.membersOf(job(podGroup), tables());
    }

    private Optional<String> why(String podGroup) {
        return JobObjectCounts.whyUnknown(job(podGroup), tables());
    }

    private static JobMembership job(String podGroup) {
        Pod pod = new PodBuilder().withNewMetadata().withName("p").withNamespace(NS).endMetadata().withNewSpec()
                .withSchedulingGroup(new PodSchedulingGroupBuilder().withPodGroupName(podGroup).build()).endSpec().build();
        var problems = new ArrayList<String>();
        var job = JobMembershipReader.read(pod, problems);
        assertThat(problems).isEmpty();
        return job.orElseThrow();
    }
}
