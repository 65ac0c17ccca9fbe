package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Job sizes read from the objects a fake API server holds, as the extender's informers see them: an API server that
 * serves only the kinds a test names in discovery (the others answer 404, as a cluster without their CRD does), and
 * refuses (403) the lists a test names.
 */
class JobObjectSizesTest {

    private static final String NS = "ml";
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    /** The kinds discovery lists. */
    private final Set<JobObjectKind> served = ConcurrentHashMap.newKeySet();
    /** API versions discovery leaves out although their kind is served (a release that dropped or has not yet added one). */
    private final Set<String> unservedVersions = ConcurrentHashMap.newKeySet();
    /** The kinds whose lists and watches (GETs) are refused. */
    private final Set<JobObjectKind> refused = ConcurrentHashMap.newKeySet();
    private KubernetesMockServer server;
    private KubernetesClient client;
    private JobObjectSizes sizes;

    @BeforeEach
    void startTheApiServer() {
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                var path = request.getPath().split("\\?")[0];
                var parts = path.split("/");
                if ("GET".equals(request.getMethod()) && parts.length == 4 && parts[1].equals("apis")) {
                    return discovery(parts[2] + "/" + parts[3]);
                }
                for (var kind : refused) {
                    if ("GET".equals(request.getMethod()) && path.startsWith("/apis/" + kind.group() + "/") && path.contains("/" + kind.plural())) {
                        return new MockResponse().setResponseCode(403).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                                + "\"message\":\"" + kind.plural() + "." + kind.group() + " is forbidden\",\"reason\":\"Forbidden\",\"code\":403}");
                    }
                }
                return super.dispatch(request);
            }
        };
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
        // fabric8's backoff between failed lists from 100 ms (its default 1 s doubles up to 32 s).
        client.getConfiguration().setWatchReconnectInterval(100);
    }

    private MockResponse discovery(String apiVersion) {
        var resources = served.stream().filter(kind -> !unservedVersions.contains(apiVersion))
                .filter(kind -> kind.versions().stream().anyMatch(v -> kind.apiVersion(v).equals(apiVersion)))
                .map(kind -> new APIResourceBuilder().withName(kind.plural()).withKind(kind.kind()).withNamespaced(true)
                        .withVerbs("list", "watch").build()).toList();
        if (resources.isEmpty()) {
            return new MockResponse().setResponseCode(404).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\",\"code\":404}");
        }
        return new MockResponse().setResponseCode(200).setBody(Serialization.asJson(new APIResourceListBuilder()
                .withGroupVersion(apiVersion).withResources(resources).build()));
    }

    @AfterEach
    void stop() {
        if (sizes != null) {
            sizes.close();
        }
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // The mock server gives up closing after a few seconds on a loaded machine; the test is over either way.
            System.err.println("JobObjectSizesTest: " + e.getMessage());
        }
    }

    private void start() {
        sizes = new JobObjectSizes(client, Duration.ofMillis(200), Duration.ofMillis(200));
        sizes.start().orTimeout(PATIENCE.toSeconds(), TimeUnit.SECONDS).join();
    }

    @Test
    void readsTheCountOfEachKindFromItsObject() {
        served.addAll(JobObjectKind.ALL);
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "mpi-pg", Map.of("minMember", 4));
        create(JobObjectKind.COSCHEDULING_POD_GROUP, "v1alpha1", "nginx", Map.of("minMember", 3));
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha3", "train-worker-0", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 5))));
        create(JobObjectKind.WORKLOAD, "v1alpha1", "train", Map.of("podGroups", List.of(
                Map.of("name", "workers", "policy", Map.of("gang", Map.of("minCount", 6))),
                Map.of("name", "ps", "policy", Map.of("gang", Map.of("minCount", 2))))));
        // 8 completions, 2 at a time: the 2 running together are the gang.
        create(JobObjectKind.JOB, "v1", "render", Map.of("completions", 8, "parallelism", 2, "completionMode", "Indexed"));
        create(JobObjectKind.JOBSET, "v1alpha2", "fine-tune", Map.of("replicatedJobs", List.of(
                Map.of("name", "leader", "template", Map.of("spec", Map.of("parallelism", 1, "completions", 1))),
                Map.of("name", "workers", "replicas", 2, "template", Map.of("spec", Map.of("parallelism", 4, "completions", 4))))));
        create(kubeflow("TFJob"), "v1", "mnist", Map.of("tfReplicaSpecs", Map.of("PS", Map.of("replicas", 2), "Worker", Map.of("replicas", 4))));
        // A replica spec without replicas has one, as the operator defaults it.
        create(kubeflow("PyTorchJob"), "v1", "bert", Map.of("pytorchReplicaSpecs", Map.of("Master", Map.of("replicas", 1), "Worker", Map.of())));
        create(kubeflow("MPIJob"), "v2beta1", "allreduce", Map.of("launcherCreationPolicy", "WaitForWorkersReady",
                "mpiReplicaSpecs", Map.of("Launcher", Map.of("replicas", 1), "Worker", Map.of("replicas", 4))));
        start();

        assertThat(sizes.membersOf(job(pod(Map.of(), Map.of("scheduling.k8s.io/group-name", "mpi-pg"))))).hasValue(4);
        assertThat(sizes.membersOf(job(pod(Map.of("scheduling.x-k8s.io/pod-group", "nginx"), Map.of())))).hasValue(3);
        var kubeGroup = pod(Map.of(), Map.of());
        kubeGroup.getSpec().setSchedulingGroup(new io.fabric8.kubernetes.api.model.PodSchedulingGroupBuilder().withPodGroupName("train-worker-0").build());
        assertThat(sizes.membersOf(job(kubeGroup))).hasValue(5);
        assertThat(sizes.membersOf(job(workloadPod("train", "workers")))).hasValue(6);
        assertThat(sizes.membersOf(job(workloadPod("train", "ps")))).hasValue(2);
        assertThat(sizes.membersOf(job(pod(Map.of("batch.kubernetes.io/job-name", "render"), Map.of("batch.kubernetes.io/job-completion-index", "3")))))
                .hasValue(2);
        assertThat(sizes.membersOf(job(pod(Map.of("jobset.sigs.k8s.io/jobset-name", "fine-tune"), Map.of())))).hasValue(9);
        assertThat(sizes.membersOf(job(owned(pod(Map.of("training.kubeflow.org/job-name", "mnist"), Map.of()), "TFJob", "mnist")))).hasValue(6);
        assertThat(sizes.membersOf(job(owned(pod(Map.of("training.kubeflow.org/job-name", "bert"), Map.of()), "PyTorchJob", "bert")))).hasValue(2);
        // The MPI operator's launcher is a Job's pod: the one training job of its name gives the count, its workers.
        assertThat(sizes.membersOf(job(owned(pod(Map.of("training.kubeflow.org/job-name", "allreduce"), Map.of()), "Job", "allreduce-launcher"))))
                .hasValue(4);
    }

    /**
     * Kubernetes 1.36 serves kube-scheduler's PodGroup as scheduling.k8s.io/v1alpha2 and 1.37 as v1alpha3 only; the count
     * is at spec.schedulingPolicy.gang.minCount in both, and the pod names its group in spec.schedulingGroup in both.
     */
    @Test
    void readsKubeSchedulersPodGroupInTheVersionTheClusterServes() {
        served.add(JobObjectKind.KUBE_POD_GROUP);
        unservedVersions.add("scheduling.k8s.io/v1alpha2");
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha3", "train-worker-0", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 6)),
                "workloadRef", Map.of("workloadName", "train", "templateName", "workers")));
        start();
        var member = job(schedulingGroupPod("train-worker-0"));

        assertThat(sizes.membersOf(member)).hasValue(6);
        assertThat(sizes.whyUnknown(job(schedulingGroupPod("absent")))).hasValue("PodGroup.scheduling.k8s.io \"absent\" not found in namespace ml");
    }

    @Test
    void readsKubeSchedulersPodGroupOfKubernetes136() {
        served.add(JobObjectKind.KUBE_POD_GROUP);
        unservedVersions.add("scheduling.k8s.io/v1alpha3");
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha2", "train-worker-0", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 5))));
        start();

        assertThat(sizes.membersOf(job(schedulingGroupPod("train-worker-0")))).hasValue(5);
    }

    /**
     * A PodGroup that states no policy of its own is sized by the Workload template it names, the Workload followed in the
     * version the cluster serves: 1.37's v1alpha3 (spec.workloadRef) here, 1.36's v1alpha2 (spec.podGroupTemplateRef) below.
     */
    @Test
    void readsTheWorkloadTemplateAPodGroupOfKubernetes137Names() {
        served.addAll(List.of(JobObjectKind.KUBE_POD_GROUP, JobObjectKind.WORKLOAD_TEMPLATES));
        unservedVersions.add("scheduling.k8s.io/v1alpha2");
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha3", "train-worker-0", Map.of("workloadRef",
                Map.of("workloadName", "train", "templateName", "workers")));
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha3", "train-chief-0", Map.of("workloadRef",
                Map.of("workloadName", "train", "templateName", "chief")));
        create(JobObjectKind.WORKLOAD_TEMPLATES, "v1alpha3", "train", Map.of("podGroupTemplates", List.of(
                Map.of("name", "workers", "schedulingPolicy", Map.of("gang", Map.of("minCount", 7))))));
        start();

        assertThat(sizes.membersOf(job(schedulingGroupPod("train-worker-0")))).hasValue(7);
        assertThat(sizes.whyUnknown(job(schedulingGroupPod("train-chief-0")))).get().asString()
                .endsWith("Workload \"train\" in namespace ml has no template \"chief\" in spec.podGroupTemplates (it has workers)");
    }

    @Test
    void readsTheWorkloadTemplateAPodGroupOfKubernetes136Names() {
        served.addAll(List.of(JobObjectKind.KUBE_POD_GROUP, JobObjectKind.WORKLOAD_TEMPLATES));
        unservedVersions.add("scheduling.k8s.io/v1alpha3");
        create(JobObjectKind.KUBE_POD_GROUP, "v1alpha2", "train-worker-0", Map.of("podGroupTemplateRef", Map.of("workload",
                Map.of("workloadName", "train", "podGroupTemplateName", "workers"))));
        create(JobObjectKind.WORKLOAD_TEMPLATES, "v1alpha2", "train", Map.of("podGroupTemplates", List.of(
                Map.of("name", "workers", "schedulingPolicy", Map.of("gang", Map.of("minCount", 5))))));
        start();

        assertThat(sizes.membersOf(job(schedulingGroupPod("train-worker-0")))).hasValue(5);
    }

    @Test
    void aClusterServingNoPodGroupVersionHetgpuKnowsSaysWhichItFollows() {
        served.add(JobObjectKind.KUBE_POD_GROUP);
        unservedVersions.addAll(List.of("scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1alpha2"));
        start();

        assertThat(sizes.whyUnknown(job(schedulingGroupPod("train-worker-0"))))
                .hasValue("the cluster does not serve PodGroup (scheduling.k8s.io/v1alpha3 or scheduling.k8s.io/v1alpha2)");
    }

    @Test
    void followsACountThatChangesAndAnObjectDeleted() {
        served.add(JobObjectKind.VOLCANO_POD_GROUP);
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "train", Map.of("minMember", 2));
        start();
        var worker = job(pod(Map.of(), Map.of("scheduling.k8s.io/group-name", "train")));
        assertThat(sizes.membersOf(worker)).hasValue(2);

        var group = groups(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1").inNamespace(NS).withName("train").get();
        group.setAdditionalProperty("spec", Map.of("minMember", 3));
        groups(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1").inNamespace(NS).resource(group).update();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(sizes.membersOf(worker)).hasValue(3));

        groups(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1").inNamespace(NS).withName("train").delete();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(sizes.whyUnknown(worker))
                .hasValue("PodGroup.scheduling.volcano.sh \"train\" not found in namespace ml"));
        assertThat(sizes.membersOf(worker)).isEmpty();
    }

    @Test
    void aKindTheClusterDoesNotServeHoldsNothingBackAndIsFollowedOnceServed() {
        served.add(JobObjectKind.VOLCANO_POD_GROUP);
        start();
        var worker = job(workloadPod("train", "workers"));

        assertThat(sizes.synced()).isTrue();
        assertThat(sizes.membersOf(worker)).isEmpty();
        assertThat(sizes.whyUnknown(worker)).hasValue("the cluster does not serve Workload (scheduling.k8s.io/v1alpha1)");

        // The CRD installed later (here: the API turned on): followed from the next look at discovery.
        create(JobObjectKind.WORKLOAD, "v1alpha1", "train", Map.of("podGroups", List.of(
                Map.of("name", "workers", "policy", Map.of("gang", Map.of("minCount", 4))))));
        served.add(JobObjectKind.WORKLOAD);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(sizes.membersOf(worker)).hasValue(4));

        // And let go once it is no longer served.
        served.remove(JobObjectKind.WORKLOAD);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(sizes.whyUnknown(worker))
                .hasValue("the cluster does not serve Workload (scheduling.k8s.io/v1alpha1)"));
    }

    @Test
    void aKindTheExtenderMayNotListHoldsNothingBackSaysWhatRbacLacksAndIsReadOnceAllowed() {
        served.addAll(List.of(JobObjectKind.COSCHEDULING_POD_GROUP, JobObjectKind.JOB));
        refused.add(JobObjectKind.COSCHEDULING_POD_GROUP);
        create(JobObjectKind.COSCHEDULING_POD_GROUP, "v1alpha1", "nginx", Map.of("minMember", 3));
        start();
        var pod = job(pod(Map.of("scheduling.x-k8s.io/pod-group", "nginx"), Map.of()));

        assertThat(sizes.membersOf(pod)).isEmpty();
        assertThat(sizes.whyUnknown(pod)).get().asString()
                .startsWith("the extender may not list podgroups.scheduling.x-k8s.io (HTTP 403 Forbidden: podgroups.scheduling.x-k8s.io is forbidden)")
                .endsWith("its ClusterRole must grant list and watch on them");

        refused.clear();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(sizes.membersOf(pod)).hasValue(3));
    }

    @Test
    void anObjectMissingOrWithACountThatCannotBeReadSaysWhichFieldAndValue() {
        served.addAll(List.of(JobObjectKind.VOLCANO_POD_GROUP, JobObjectKind.JOB, JobObjectKind.WORKLOAD, JobObjectKind.JOBSET));
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "words", Map.of("minMember", "four"));
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "negative", Map.of("minMember", -1));
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "fraction", Map.of("minMember", 2.5));
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "none", Map.of("queue", "default"));
        create(JobObjectKind.JOB, "v1", "render", Map.of("parallelism", 2));
        create(JobObjectKind.WORKLOAD, "v1alpha1", "train", Map.of("podGroups", List.of(
                Map.of("name", "workers", "policy", Map.of("gang", Map.of("minCount", 4))),
                Map.of("name", "ps", "policy", Map.of("basic", Map.of())))));
        create(JobObjectKind.JOBSET, "v1alpha2", "trainjob", Map.of("replicatedJobs", List.of(
                Map.of("name", "initializer", "template", Map.of("spec", Map.of())),
                Map.of("name", "node", "dependsOn", List.of(Map.of("name", "initializer", "status", "Complete")),
                        "template", Map.of("spec", Map.of("parallelism", 4))))));
        start();

        assertThat(whyVolcano("words")).hasValue("PodGroup.scheduling.volcano.sh \"words\" in namespace ml has spec.minMember \"four\": "
                + "expected a whole number of at least 1");
        assertThat(whyVolcano("negative")).hasValue("PodGroup.scheduling.volcano.sh \"negative\" in namespace ml has spec.minMember \"-1\": "
                + "expected a whole number of at least 1");
        assertThat(whyVolcano("fraction")).hasValue("PodGroup.scheduling.volcano.sh \"fraction\" in namespace ml has spec.minMember \"2.5\": "
                + "expected a whole number of at least 1");
        assertThat(whyVolcano("none")).hasValue("PodGroup.scheduling.volcano.sh \"none\" in namespace ml has no spec.minMember");
        assertThat(whyVolcano("absent")).hasValue("PodGroup.scheduling.volcano.sh \"absent\" not found in namespace ml");
        assertThat(sizes.whyUnknown(job(pod(Map.of("batch.kubernetes.io/job-name", "render"), Map.of("batch.kubernetes.io/job-completion-index", "0")))))
                .hasValue("Job \"render\" in namespace ml has no spec.completions");
        assertThat(sizes.whyUnknown(job(workloadPod("train", "ps"))))
                .hasValue("Workload \"train\" in namespace ml has a basic scheduling policy (spec.podGroups[ps].policy.basic), no gang and so no minCount");
        assertThat(sizes.whyUnknown(job(workloadPod("train", "chief"))))
                .hasValue("Workload \"train\" in namespace ml has no pod group \"chief\" in spec.podGroups (it has ps, workers)");
        assertThat(sizes.whyUnknown(job(pod(Map.of("jobset.sigs.k8s.io/jobset-name", "trainjob"), Map.of()))))
                .hasValue("JobSet \"trainjob\" in namespace ml starts its replicated jobs in stages (spec.replicatedJobs[node].dependsOn): "
                        + "its pods do not all run at once");
    }

    @Test
    void aCountThePodStatesWinsOverTheObjects() {
        served.add(JobObjectKind.VOLCANO_POD_GROUP);
        create(JobObjectKind.VOLCANO_POD_GROUP, "v1beta1", "train", Map.of("minMember", 5));
        start();

        var stated = job(pod(Map.of("hetgpu.io/job-size", "3"), Map.of("scheduling.k8s.io/group-name", "train")));
        assertThat(sizes.membersOf(stated)).hasValue(3);
        assertThat(sizes.whyUnknown(stated)).isEmpty();
        var unstated = job(pod(Map.of("hetgpu.io/job", "mine"), Map.of()));
        assertThat(sizes.whyUnknown(unstated)).hasValue("the pod names no hetgpu.io/job-size");
    }

    private java.util.Optional<String> whyVolcano(String group) {
        return sizes.whyUnknown(job(pod(Map.of(), Map.of("scheduling.k8s.io/group-name", group))));
    }

    private io.fabric8.kubernetes.client.dsl.MixedOperation<GenericKubernetesResource, io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
            io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>> groups(JobObjectKind kind, String version) {
        return client.genericKubernetesResources(kind.context(version));
    }

    private void create(JobObjectKind kind, String version, String name, Map<String, Object> spec) {
        var object = new GenericKubernetesResource();
        object.setApiVersion(kind.apiVersion(version));
        object.setKind(kind.kind());
        object.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
        object.setAdditionalProperty("spec", spec);
        groups(kind, version).inNamespace(NS).resource(object).create();
    }

    private static JobObjectKind kubeflow(String kind) {
        return JobObjectKind.KUBEFLOW.stream().filter(one -> one.kind().equals(kind)).findFirst().orElseThrow();
    }

    private static JobMembership job(Pod pod) {
        var problems = new ArrayList<String>();
        var job = JobMembershipReader.read(pod, problems);
        assertThat(problems).isEmpty();
        return job.orElseThrow();
    }

    private static Pod pod(Map<String, String> labels, Map<String, String> annotations) {
        return new PodBuilder().withNewMetadata().withName("p").withNamespace(NS).withLabels(new HashMap<>(labels))
                .withAnnotations(new HashMap<>(annotations)).endMetadata().withNewSpec().endSpec().build();
    }

    private static Pod schedulingGroupPod(String podGroup) {
        var pod = pod(Map.of(), Map.of());
        pod.getSpec().setSchedulingGroup(new io.fabric8.kubernetes.api.model.PodSchedulingGroupBuilder().withPodGroupName(podGroup).build());
        return pod;
    }

    private static Pod workloadPod(String workload, String podGroup) {
        var pod = pod(Map.of(), Map.of());
        pod.getSpec().setAdditionalProperty("workloadRef", Map.of("name", workload, "podGroup", podGroup));
        return pod;
    }

    private static Pod owned(Pod pod, String kind, String name) {
        pod.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withKind(kind).withName(name).withController(true)
                .withApiVersion("kubeflow.org/v1").withUid("u").build()));
        return pod;
    }
}
