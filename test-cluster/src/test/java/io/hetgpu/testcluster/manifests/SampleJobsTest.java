package io.hetgpu.testcluster.manifests;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.RESOURCE_NAME;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_NAME;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.extender.cluster.ListedJobSizes;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.job.JobSource;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.ControllerPods;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The sample jobs of {@code manifests/samples/}, rendered by the real {@code kubectl kustomize}, as hetgpu's job reader
 * sees them: each workload's pods are made as its controller makes them ({@link ControllerPods}: the labels, annotations
 * and owner the Job, StatefulSet, JobSet and Kubeflow training operator controllers add), then read by {@link JobMembershipReader} and
 * sized from the rendered objects by {@link ListedJobSizes}, by the rule the extender reads them with.
 */
class SampleJobsTest {

    private static final String NS = "ml";

    private final Rendering samples = Kubectl.kustomize(ManifestTree.SAMPLES);
    /** The samples' objects as applied in namespace {@value #NS}, where their controllers make their pods. */
    private final List<HasMetadata> applied = samples.objects().stream().map(SampleJobsTest::inNamespace).toList();
    /** The member counts the extender would read from those objects. */
    private final ListedJobSizes sizes = ListedJobSizes.of(applied);

    /** What the reader makes of one job: its convention, its member count, the roles of its pods, how many pods run at once. */
    private record Seen(JobSource source, OptionalInt members, TreeSet<String> roles, int pods) {
    }

    @Test
    void eachSampleIsTheJobItsCommentSays() {
        var jobs = jobs();

        assertThat(jobs).containsOnlyKeys(NS + "/resnet50-ddp", NS + "/llama-finetune", NS + "/bert-pretrain", NS + "/resnet50-tfjob",
                NS + "/resnet50", NS + "/resnet50-lr-sweep");
        assertThat(jobs.get(NS + "/resnet50-ddp")).isEqualTo(seen(JobSource.INDEXED_JOB, 4, List.of(), 4));
        assertThat(jobs.get(NS + "/llama-finetune")).isEqualTo(seen(JobSource.JOBSET, 4, List.of("workers"), 4));
        assertThat(jobs.get(NS + "/bert-pretrain")).isEqualTo(seen(JobSource.KUBEFLOW_TRAINING, 4, List.of("master", "worker"), 4));
        assertThat(jobs.get(NS + "/resnet50-tfjob")).isEqualTo(seen(JobSource.KUBEFLOW_TRAINING, 6, List.of("ps", "worker"), 6));
        // Two controllers make the plain TensorFlow job's pods: only its hetgpu.io/job-size can say there are six.
        assertThat(jobs.get(NS + "/resnet50")).isEqualTo(seen(JobSource.HETGPU, 6, List.of("ps", "worker"), 6));
        // The sweep's trials are independent: each is a job of one, placed alone.
        assertThat(jobs.get(NS + "/resnet50-lr-sweep").members()).hasValue(1);
    }

    @Test
    void everyJobOfSeveralPodsRunsAsManyPodsAtOnceAsItsMemberCount() {
        // Fewer and the job would never be planned (it waits for all its members); more and it would be placed in parts.
        jobs().forEach((key, seen) -> {
            if (seen.members().orElse(0) > 1) {
                assertThat(seen.pods()).as("pods of %s its controllers run at once", key).isEqualTo(seen.members().getAsInt());
            }
        });
    }

    @Test
    void everySampleGpuPodIsForHetgpuAsksForNvlinkWhenItTakesSeveralAndMayRecordItsCheckpoints() {
        var pods = applied.stream().flatMap(object -> ControllerPods.of(object).stream()).toList();
        var gpuPods = pods.stream().filter(pod -> gpus(pod) > 0).toList();
        assertThat(gpuPods).hasSizeGreaterThan(20).allSatisfy(pod -> {
            assertThat(pod.getSpec().getSchedulerName()).as(pod.getMetadata().getName()).isEqualTo(SCHEDULER_NAME);
            assertThat(pod.getSpec().getPriorityClassName()).as(pod.getMetadata().getName()).isNotBlank();
        });
        assertThat(gpuPods).filteredOn(pod -> gpus(pod) > 1).allSatisfy(pod ->
                assertThat(pod.getMetadata().getAnnotations()).as(pod.getMetadata().getName()).containsEntry(HetgpuKeys.POD_INTERCONNECT, "nvlink"));
        // Training that checkpoints runs as the account that may write hetgpu.io/checkpointed-at, and knows its pod's name.
        var writers = gpuPods.stream().filter(pod -> "hetgpu-checkpoint-writer".equals(pod.getSpec().getServiceAccountName())).toList();
        assertThat(writers).hasSizeGreaterThan(15).allSatisfy(pod -> assertThat(pod.getSpec().getContainers().getFirst().getEnv())
                .anyMatch(env -> env.getValueFrom() != null && env.getValueFrom().getFieldRef() != null
                        && "metadata.name".equals(env.getValueFrom().getFieldRef().getFieldPath())));
    }

    @Test
    void theCheckpointWriterMayPatchPodsOfItsNamespace() {
        // What it may do there is narrowed to its own pod's checkpoint by the admission policy (AdmissionPoliciesTest).
        var role = samples.one(Role.class, "hetgpu-checkpoint-writer");
        assertThat(role.getRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getResources()).containsExactly("pods");
            assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "patch");
        });
        var binding = samples.one(RoleBinding.class, "hetgpu-checkpoint-writer");
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(subject -> assertThat(subject.getName()).isEqualTo("hetgpu-checkpoint-writer"));
    }

    private static Seen seen(JobSource source, int members, List<String> roles, int pods) {
        return new Seen(source, OptionalInt.of(members), new TreeSet<>(roles), pods);
    }

    /** Every job the samples' pods belong to, by key, as the reader and the sizes from the rendered objects say. */
    private Map<String, Seen> jobs() {
        var jobs = new LinkedHashMap<String, Seen>();
        for (var object : applied) {
            for (var pod : ControllerPods.of(object)) {
                var problems = new ArrayList<String>();
                var membership = JobMembershipReader.read(pod, problems);
                assertThat(problems).as("what the reader objects to in %s", pod.getMetadata().getName()).isEmpty();
                membership.ifPresent(job -> jobs.merge(job.key(), new Seen(job.source(), sizes.membersOf(job), roles(job), 1),
                        (a, b) -> {
                            assertThat(b.source()).as(job.key()).isEqualTo(a.source());
                            assertThat(b.members()).as(job.key()).isEqualTo(a.members());
                            var roles = new TreeSet<>(a.roles());
                            roles.addAll(b.roles());
                            return new Seen(a.source(), a.members(), roles, a.pods() + 1);
                        }));
            }
        }
        return jobs;
    }

    private static TreeSet<String> roles(JobMembership job) {
        return job.role().isEmpty() ? new TreeSet<>() : new TreeSet<>(List.of(job.role()));
    }

    /** A copy of the object in namespace {@value #NS}: the rendering is shared by other tests, and stays as it is. */
    private static HasMetadata inNamespace(HasMetadata object) {
        var copy = Serialization.jsonMapper().convertValue(object, GenericKubernetesResource.class);
        copy.getMetadata().setNamespace(NS);
        return copy;
    }

    private static int gpus(Pod pod) {
        return PodTemplates.gpus(new PodTemplateSpec(pod.getMetadata(), pod.getSpec()), RESOURCE_NAME);
    }
}
