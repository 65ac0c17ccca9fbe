package io.hetgpu.extender.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSchedulingGroupBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** One pod per convention, labelled as its controller labels it; the precedence; malformed names and sizes. */
class JobMembershipReaderTest {

    record Expected(String name, JobSource source, String role, OptionalInt index, JobSize size) {
    }

    static Stream<Arguments> conventions() {
        return Stream.of(
                Arguments.of("hetgpu.io/job with a size", pod(Map.of("hetgpu.io/job", "resnet", "hetgpu.io/role", "Worker"),
                                Map.of("hetgpu.io/job-size", "4")),
                        new Expected("resnet", JobSource.HETGPU, "worker", OptionalInt.empty(), new JobSize.Stated(4, "hetgpu.io/job-size"))),
                Arguments.of("hetgpu.io/job without a size", pod(Map.of("hetgpu.io/job", "resnet"), Map.of()),
                        new Expected("resnet", JobSource.HETGPU, "", OptionalInt.empty(), new JobSize.Unstated("the pod names no hetgpu.io/job-size"))),
                Arguments.of("kube-scheduler PodGroup (spec.schedulingGroup)", schedulingGroup("training-worker-0"),
                        new Expected("training-worker-0", JobSource.KUBE_POD_GROUP, "", OptionalInt.empty(),
                                new JobSize.InObject("PodGroup.scheduling.k8s.io", "training-worker-0", "spec.schedulingPolicy.gang.minCount"))),
                Arguments.of("kube-scheduler Workload (spec.workloadRef)", workloadRef(Map.of("name", "training-job-workload", "podGroup", "workers")),
                        new Expected("training-job-workload/workers", JobSource.KUBE_WORKLOAD, "workers", OptionalInt.empty(),
                                new JobSize.InObject("Workload", "training-job-workload", "spec.podGroups[workers].policy.gang.minCount"))),
                // Each replica of a pod group is a gang of its own, so a job of its own.
                Arguments.of("kube-scheduler Workload, a replicated pod group", workloadRef(Map.of("name", "lws", "podGroup", "group",
                                "podGroupReplicaKey", "2")),
                        new Expected("lws/group/2", JobSource.KUBE_WORKLOAD, "group", OptionalInt.empty(),
                                new JobSize.InObject("Workload", "lws", "spec.podGroups[group].policy.gang.minCount"))),
                // Volcano's job controller: the PodGroup annotation, the task's name as task-spec.
                Arguments.of("Volcano Job", pod(Map.of("volcano.sh/job-name", "mpi", "volcano.sh/task-spec", "mpiworker"),
                                Map.of("scheduling.k8s.io/group-name", "mpi-7f2c", "volcano.sh/task-spec", "mpiworker", "volcano.sh/job-name", "mpi")),
                        new Expected("mpi-7f2c", JobSource.VOLCANO_POD_GROUP, "mpiworker", OptionalInt.empty(),
                                new JobSize.InObject("PodGroup.scheduling.volcano.sh", "mpi-7f2c", "spec.minMember"))),
                Arguments.of("Volcano's own annotation key", pod(Map.of(), Map.of("scheduling.volcano.sh/group-name", "pg")),
                        new Expected("pg", JobSource.VOLCANO_POD_GROUP, "", OptionalInt.empty(),
                                new JobSize.InObject("PodGroup.scheduling.volcano.sh", "pg", "spec.minMember"))),
                Arguments.of("coscheduling", pod(Map.of("scheduling.x-k8s.io/pod-group", "nginx"), Map.of()),
                        new Expected("nginx", JobSource.COSCHEDULING_POD_GROUP, "", OptionalInt.empty(),
                                new JobSize.InObject("PodGroup.scheduling.x-k8s.io", "nginx", "spec.minMember"))),
                Arguments.of("Kubeflow TFJob", owned(pod(Map.of("training.kubeflow.org/job-name", "mnist", "training.kubeflow.org/replica-type", "ps",
                                "training.kubeflow.org/replica-index", "1", "training.kubeflow.org/operator-name", "tfjob-controller"), Map.of()), "TFJob", "mnist"),
                        new Expected("mnist", JobSource.KUBEFLOW_TRAINING, "ps", OptionalInt.of(1),
                                new JobSize.InObject("TFJob", "mnist", "the sum of its replica specs' replicas"))),
                // Kubeflow Trainer's TrainJob runs as a JobSet of its own name; the pods carry JobSet's keys and the Job controller's.
                Arguments.of("TrainJob (as its JobSet)", pod(Map.of("jobset.sigs.k8s.io/jobset-name", "fine-tune", "jobset.sigs.k8s.io/replicatedjob-name", "node",
                                "jobset.sigs.k8s.io/job-index", "0", "jobset.sigs.k8s.io/replicatedjob-replicas", "1",
                                "batch.kubernetes.io/job-name", "fine-tune-node-0", "job-name", "fine-tune-node-0",
                                "batch.kubernetes.io/job-completion-index", "2"),
                                Map.of("jobset.sigs.k8s.io/jobset-name", "fine-tune", "batch.kubernetes.io/job-completion-index", "2")),
                        new Expected("fine-tune", JobSource.JOBSET, "node", OptionalInt.of(0),
                                new JobSize.InObject("JobSet", "fine-tune", "the sum over spec.replicatedJobs of replicas × parallelism"))),
                Arguments.of("indexed Job", pod(Map.of("batch.kubernetes.io/job-name", "render", "job-name", "render",
                                "batch.kubernetes.io/controller-uid", "u1", "batch.kubernetes.io/job-completion-index", "3"),
                                Map.of("batch.kubernetes.io/job-completion-index", "3")),
                        new Expected("render", JobSource.INDEXED_JOB, "", OptionalInt.of(3), new JobSize.InObject("Job", "render", "spec.completions"))),
                Arguments.of("indexed Job before 1.27 (job-name only)", pod(Map.of("job-name", "render"),
                                Map.of("batch.kubernetes.io/job-completion-index", "0")),
                        new Expected("render", JobSource.INDEXED_JOB, "", OptionalInt.of(0), new JobSize.InObject("Job", "render", "spec.completions"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("conventions")
    void readsEachConventionAsItsControllerWritesIt(String convention, Pod pod, Expected expected) {
        var problems = new ArrayList<String>();
        var membership = JobMembershipReader.read(pod, problems).orElseThrow();

        assertThat(problems).isEmpty();
        assertThat(new Expected(membership.name(), membership.source(), membership.role(), membership.index(), membership.size())).isEqualTo(expected);
        assertThat(membership.key()).isEqualTo("team-a/" + expected.name());
    }

    @Test
    void aPodOfNoJobAndANonIndexedJobsPodBelongToNone() {
        var problems = new ArrayList<String>();
        assertThat(JobMembershipReader.read(pod(Map.of("app", "web"), Map.of()), problems)).isEmpty();
        // A NonIndexed Job's pods are interchangeable workers, not members of a gang.
        assertThat(JobMembershipReader.read(pod(Map.of("batch.kubernetes.io/job-name", "batch", "job-name", "batch"), Map.of()), problems)).isEmpty();
        assertThat(problems).isEmpty();
    }

    @Test
    void aNullAmongTheOwnersIsPassedOverAsJsonMayGiveIt() {
        var pod = owned(pod(Map.of("training.kubeflow.org/job-name", "mnist", "training.kubeflow.org/replica-type", "ps"), Map.of()),
                "TFJob", "mnist");
        var owners = new ArrayList<OwnerReference>();
        owners.add(null);
        owners.addAll(pod.getMetadata().getOwnerReferences());
        pod.getMetadata().setOwnerReferences(owners);

        assertThat(read(pod).size()).isEqualTo(new JobSize.InObject("TFJob", "mnist", "the sum of its replica specs' replicas"));
    }

    @Test
    void theFirstConventionInThePrecedenceWins() {
        // A TFJob gang-scheduled by Volcano: the operator's labels and the PodGroup it made, here under another name to tell them apart.
        var both = pod(Map.of("training.kubeflow.org/job-name", "mnist", "training.kubeflow.org/replica-type", "worker"),
                Map.of("scheduling.k8s.io/group-name", "mnist-pg"));
        assertThat(read(both).source()).isEqualTo(JobSource.VOLCANO_POD_GROUP);
        assertThat(read(both).name()).isEqualTo("mnist-pg");
        assertThat(read(both).role()).as("the role of a later convention is kept").isEqualTo("worker");

        var withHetgpu = pod(Map.of("hetgpu.io/job", "mine", "training.kubeflow.org/job-name", "mnist", "scheduling.x-k8s.io/pod-group", "g",
                "jobset.sigs.k8s.io/jobset-name", "js"), Map.of());
        assertThat(read(withHetgpu).source()).isEqualTo(JobSource.HETGPU);

        var workloadAndCoscheduling = workloadRef(Map.of("name", "w", "podGroup", "workers"));
        workloadAndCoscheduling.getMetadata().getLabels().put("scheduling.x-k8s.io/pod-group", "g");
        assertThat(read(workloadAndCoscheduling).source()).isEqualTo(JobSource.KUBE_WORKLOAD);

        var jobSetAndTraining = pod(Map.of("jobset.sigs.k8s.io/jobset-name", "js", "training.kubeflow.org/job-name", "t"), Map.of());
        assertThat(read(jobSetAndTraining).source()).isEqualTo(JobSource.KUBEFLOW_TRAINING);
    }

    /**
     * Pods as the API server sends them, through fabric8's own deserializer: 1.36 and 1.37 write the PodGroup's name in
     * spec.schedulingGroup (a field fabric8 7.8 models), 1.35 wrote spec.workloadRef (which 1.36 removed).
     */
    @Test
    void readsThePodAsEachReleaseSerializesIt() {
        var release137 = Serialization.unmarshal("""
                {"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0","namespace":"team-a"},
                 "spec":{"schedulerName":"hetgpu-scheduler","schedulingGroup":{"podGroupName":"train-workers-0"},"containers":[]}}""", Pod.class);
        var release135 = Serialization.unmarshal("""
                {"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0","namespace":"team-a"},
                 "spec":{"workloadRef":{"name":"train","podGroup":"workers","podGroupReplicaKey":"0"},"containers":[]}}""", Pod.class);
        var problems = new ArrayList<String>();

        var group = JobMembershipReader.read(release137, problems).orElseThrow();
        var workload = JobMembershipReader.read(release135, problems).orElseThrow();

        assertThat(problems).isEmpty();
        assertThat(List.of(group.source(), group.name())).containsExactly(JobSource.KUBE_POD_GROUP, "train-workers-0");
        assertThat(List.of(workload.source(), workload.name(), workload.role())).containsExactly(JobSource.KUBE_WORKLOAD, "train/workers/0", "workers");
    }

    @Test
    void aStatedSizeWinsOverTheObjectsForAnyConvention() {
        var pod = pod(Map.of("scheduling.x-k8s.io/pod-group", "nginx", "hetgpu.io/job-size", "3"), Map.of());
        assertThat(read(pod).size()).isEqualTo(new JobSize.Stated(3, "hetgpu.io/job-size"));
        assertThat(JobSizes.STATED_ONLY.membersOf(read(pod))).hasValue(3);
        assertThat(JobSizes.STATED_ONLY.membersOf(read(pod(Map.of("scheduling.x-k8s.io/pod-group", "nginx"), Map.of())))).isEmpty();
    }

    @Test
    void aWorkloadsJobNamesItsGangForTheSizeToBeReadBack() {
        assertThat(JobMembershipReader.WorkloadGang.of(read(workloadRef(Map.of("name", "lws", "podGroup", "group", "podGroupReplicaKey", "2")))))
                .hasValue(new JobMembershipReader.WorkloadGang("lws", "group", "2"));
        assertThat(JobMembershipReader.WorkloadGang.of(read(workloadRef(Map.of("name", "train", "podGroup", "workers")))))
                .hasValue(new JobMembershipReader.WorkloadGang("train", "workers", ""));
        assertThat(JobMembershipReader.WorkloadGang.of(read(pod(Map.of("hetgpu.io/job", "resnet"), Map.of())))).isEmpty();
    }

    @Test
    void theSizesNoPodCarriesSayWhereToReadThem() {
        assertThat(new JobSize.InObject("PodGroup.scheduling.x-k8s.io", "nginx", "spec.minMember").describe())
                .isEqualTo("size unknown: read from PodGroup.scheduling.x-k8s.io \"nginx\" (spec.minMember)");
    }

    static Stream<Arguments> malformed() {
        var longName = "x".repeat(300);
        return Stream.of(
                Arguments.of(pod(Map.of("hetgpu.io/job", " "), Map.of()), "hetgpu.io/job: expected the name of the pod's job or group, got \" \""),
                Arguments.of(pod(Map.of("hetgpu.io/job", "a"), Map.of("hetgpu.io/job-size", "four")),
                        "hetgpu.io/job-size: expected the job's member count, a whole number of at least 1, got \"four\""),
                Arguments.of(pod(Map.of("hetgpu.io/job", "a"), Map.of("hetgpu.io/job-size", "0")),
                        "hetgpu.io/job-size: expected the job's member count, a whole number of at least 1, got \"0\""),
                Arguments.of(pod(Map.of("hetgpu.io/job", "a"), Map.of("hetgpu.io/job-size", longName)),
                        "hetgpu.io/job-size: expected the job's member count, a whole number of at least 1, got \"" + "x".repeat(64) + "…\"(300 bytes)"),
                Arguments.of(pod(Map.of("hetgpu.io/job", "a", "hetgpu.io/job-size", "2"), Map.of("hetgpu.io/job-size", "3")),
                        "hetgpu.io/job-size: the label says \"2\" and the annotation \"3\"; give one"),
                Arguments.of(pod(Map.of(), Map.of("hetgpu.io/job-size", "2")), "hetgpu.io/job-size: the pod names \"2\" members but belongs to no job"),
                Arguments.of(pod(Map.of(), Map.of("scheduling.k8s.io/group-name", "")), "scheduling.k8s.io/group-name: expected the name of the pod's job or group, got \"\""),
                Arguments.of(pod(Map.of("scheduling.x-k8s.io/pod-group", ""), Map.of()), "scheduling.x-k8s.io/pod-group: expected the name"),
                Arguments.of(workloadRef(Map.of("name", "w")), "spec.workloadRef.podGroup: expected the name of the pod's job or group, got \"\""),
                Arguments.of(workloadRef("w"), "spec.workloadRef: expected an object with name and podGroup, got \"w\""),
                Arguments.of(workloadRef(Map.of("name", "w", "podGroup", "g", "podGroupReplicaKey", 3)),
                        "spec.workloadRef.podGroupReplicaKey: expected the name of the pod group's replica, got \"3\""),
                Arguments.of(schedulingGroup(""), "spec.schedulingGroup.podGroupName: expected the name"),
                Arguments.of(pod(Map.of("training.kubeflow.org/job-name", "t", "training.kubeflow.org/replica-index", "first"), Map.of()),
                        "training.kubeflow.org/replica-index: expected a whole number of at least 0, got \"first\""),
                Arguments.of(pod(Map.of("job-name", "render"), Map.of("batch.kubernetes.io/job-completion-index", "-1")),
                        "batch.kubernetes.io/job-completion-index: expected a whole number of at least 0, got \"-1\""));
    }

    @ParameterizedTest
    @MethodSource("malformed")
    void aMalformedNameSizeOrIndexIsAProblemNamingTheKeyAndTheValue(Pod pod, String problem) {
        var problems = new ArrayList<String>();
        assertThat(JobMembershipReader.read(pod, problems)).isEmpty();
        assertThat(problems).singleElement().asString().startsWith(problem);
        assertThat(JobMembershipReader.keyOf(pod)).as("the informer's index skips it").isEmpty();
    }

    private static JobMembership read(Pod pod) {
        var problems = new ArrayList<String>();
        var membership = JobMembershipReader.read(pod, problems).orElseThrow();
        assertThat(problems).isEmpty();
        return membership;
    }

    private static Pod pod(Map<String, String> labels, Map<String, String> annotations) {
        return new PodBuilder().withMetadata(new ObjectMetaBuilder().withName("p").withNamespace("team-a")
                .withLabels(new java.util.HashMap<>(labels)).withAnnotations(new java.util.HashMap<>(annotations)).build())
                .withNewSpec().endSpec().build();
    }

    private static Pod owned(Pod pod, String kind, String name) {
        pod.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("kubeflow.org/v1").withKind(kind)
                .withName(name).withUid("u").withController(true).build()));
        return pod;
    }

    private static Pod schedulingGroup(String name) {
        var pod = pod(Map.of(), Map.of());
        pod.getSpec().setSchedulingGroup(new PodSchedulingGroupBuilder().withPodGroupName(name).build());
        return pod;
    }

    /** As a 1.35 API server sends it: fabric8 7.8 keeps the field it does not model among the spec's unknown properties. */
    private static Pod workloadRef(Object ref) {
        var pod = pod(Map.of(), Map.of());
        pod.getSpec().setAdditionalProperty("workloadRef", ref);
        return pod;
    }
}
