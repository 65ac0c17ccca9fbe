package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.PriorityAdmission;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.demo.DemoCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code hetgpu explain} on every sample of {@code manifests/samples}, against the demo's cluster as {@code --demo} sets
 * it up, then the same objects created in that cluster and placed by the test cluster's scheduler driver with the real
 * extender over HTTP: each pod lands on the node explain named, with the GPUs it named. Explain reads the cluster through
 * a kubeconfig, as against any cluster, and its requests are recorded: get and list only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExplainSamplesTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final List<String> ALONGSIDE = List.of("training-data.yaml", "checkpoint-writer.yaml");

    private TestCluster cluster;
    private DeployedConfiguration configuration;
    private Extender extender;
    private Path kubeconfig;
    private final List<ApiServer.Request> requests = new CopyOnWriteArrayList<>();
    private final List<String> namespaces = new ArrayList<>();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        cluster = TestCluster.start(DemoCluster.nodes(), dir, message -> { });
        ExplainDemo.furnish(cluster.client());
        configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        kubeconfig = cluster.api().writeKubeconfig(dir.resolve("kubeconfig"));
        cluster.api().observe(request -> {
            if (ExplainCommand.USER_AGENT.equals(request.userAgent())) {
                requests.add(request);
            }
        });
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"finetune-job.yaml", "pytorch-indexed-job.yaml", "jobset-finetune.yaml", "pytorchjob.yaml",
            "tfjob-parameter-servers.yaml", "tf-parameter-server-job.yaml", "hyperparameter-sweep.yaml"})
    void eachPodLandsWhereExplainSaidWithTheGpusItSaid(String sample) throws Exception {
        var namespace = "sample-" + sample.replace(".yaml", "");
        emptyCluster();
        namespaces.add(namespace);
        requests.clear();

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", namespace, "-o", "json",
                "-f", Explaining.sample(ALONGSIDE.get(0)), "-f", Explaining.sample(ALONGSIDE.get(1)), "-f", Explaining.sample(sample));

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(requests).as("explain's requests").isNotEmpty()
                .allSatisfy(request -> assertThat(request.method() + " " + request.path()).startsWith("GET ").doesNotContain("watch=true"));
        var said = new LinkedHashMap<String, Placement>();
        for (var pod : explained.json().path("pods")) {
            var gpus = new ArrayList<String>();
            pod.path("gpus").forEach(gpu -> gpus.add(gpu.asText()));
            said.put(pod.path("name").asText(), new Placement(pod.path("outcome").asText(), pod.path("node").asText(""), gpus));
        }
        assertThat(said).as("what explain says of %s", sample).isNotEmpty()
                .allSatisfy((pod, placement) -> assertThat(placement.outcome()).as(pod).isEqualTo("placed"));

        var pods = apply(namespace, sample, explained);
        var decisions = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HTTP, ExplainRun.FIRST_BY_NAME)
                .scheduleRound(this::awaitSeenByTheExtender);

        assertThat(decisions).hasSize(pods.size()).allMatch(decision -> decision instanceof Decision.Bound);
        var done = new LinkedHashMap<String, Placement>();
        for (var pod : cluster.client().pods().inNamespace(namespace).list().getItems()) {
            done.put(pod.getMetadata().getName(), new Placement("placed", pod.getSpec().getNodeName(), devices(pod)));
        }
        assertThat(done).as("where the test cluster put %s", sample).isEqualTo(said);
    }

    @Test
    void theTextSaysWhereEachPodGoesAndWhyInKubeSchedulersTotals() throws Exception {
        emptyCluster();

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "text", "-f", Explaining.sample("training-data.yaml"),
                "-f", Explaining.sample("finetune-job.yaml"));

        assertThat(explained.code()).as(explained.err()).isZero();
        var json = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "text", "-o", "json", "-f", Explaining.sample("training-data.yaml"),
                "-f", Explaining.sample("finetune-job.yaml")).json().path("pods").get(0);
        // The urgent job takes the free H100s; it refuses the A100s (evictForFasterCards) and the older cards (its minimum).
        assertThat(explained.out())
                .contains("text/" + json.path("name").asText() + " (Job bert-finetune)")
                .contains("-> " + json.path("node").asText() + ": 8x H100")
                .contains("the only node left after the filters")
                .contains("(dgx-a100-1): faster cards are free, or preemption can free them, for this high-priority pod")
                .contains("pod needs A100 or newer (tier 70 and up)");

        // A low-priority sweep ranks several nodes, each with kube-scheduler's total.
        var sweep = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "text", "-f", Explaining.sample("hyperparameter-sweep.yaml"));
        assertThat(sweep.code()).as(sweep.err()).isZero();
        var trial = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "text", "-o", "json", "-f",
                Explaining.sample("hyperparameter-sweep.yaml")).json().path("pods").get(0);
        var best = trial.path("ranking").get(0);
        assertThat(trial.path("ranking").size()).isGreaterThan(1);
        assertThat(sweep.out())
                .contains("-> " + trial.path("node").asText() + ": 1x ")
                .contains("ranked by kube-scheduler's total = hetgpu's score x 5 x 10 + its own")
                .contains(best.path("node").asText() + " ").contains(best.path("total").asText());
        assertThat(best.path("total").asLong()).isEqualTo(best.path("hetgpu").asLong() * 5 * 10 + best.path("kubeScheduler").asLong());
    }

    @Test
    void aPodThatWaitsInTheClusterIsToldWhyAndOneBoundIsSaidToBe() throws Exception {
        emptyCluster();
        namespaces.add("waiting");
        var workloads = Workloads.of(WorkloadFiles.read(List.of(Explaining.sample("finetune-job.yaml")), System.in).objects(), "waiting");
        var admission = new PriorityAdmission(cluster.client().scheduling().v1().priorityClasses().list().getItems());
        var finetune = ((PriorityAdmission.Admitted) admission.admit(workloads.pods().getFirst().pod())).pod();
        cluster.client().resource(finetune).create();
        var big = new PodBuilder(finetune).editMetadata().withName("big").withUid(null).endMetadata()
                .editSpec().editFirstContainer().editResources().addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("9"))
                .endResources().endContainer().endSpec().build();
        cluster.client().resource(big).create();
        new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HTTP, ExplainRun.FIRST_BY_NAME).scheduleRound();
        requests.clear();

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "waiting", "-o", "json", "big", "pod/" + finetune.getMetadata().getName());

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(requests).isNotEmpty().allSatisfy(request -> assertThat(request.method()).isEqualTo("GET"));
        var waits = explained.pod("big");
        assertThat(waits.path("outcome").asText()).isEqualTo("pending");
        assertThat(waits.path("workload").asText()).isEqualTo("Pod");
        assertThat(waits.path("changes").get(0).asText()).startsWith("no node has 9 A100 or newer (tier 70 and up) GPUs joined by NVLink at all");
        var bound = explained.pod(finetune.getMetadata().getName());
        assertThat(bound.path("outcome").asText()).isEqualTo("already-bound");
        assertThat(bound.path("node").asText())
                .isEqualTo(cluster.client().pods().inNamespace("waiting").withName(finetune.getMetadata().getName()).get().getSpec().getNodeName());
    }

    /** What a pod came to: where explain says it goes, or where the test cluster bound it, and its GPUs. */
    private record Placement(String outcome, String node, List<String> gpus) {
    }

    /**
     * The sample's objects created in its namespace as {@code kubectl apply} and their controllers would: the claims, the
     * workload objects (their sizes read by the extender), then the pods, as admission leaves them.
     */
    private List<Pod> apply(String namespace, String sample, Explaining explained) throws Exception {
        var files = new ArrayList<String>();
        ALONGSIDE.forEach(file -> files.add(Explaining.sample(file)));
        files.add(Explaining.sample(sample));
        var workloads = Workloads.of(WorkloadFiles.read(files, System.in).objects(), namespace);
        workloads.claims().forEach(claim -> cluster.client().resource(claim).create());
        for (HasMetadata object : workloads.created()) {
            cluster.client().resource(object).create();
        }
        var admission = new PriorityAdmission(cluster.client().scheduling().v1().priorityClasses().list().getItems());
        var pods = new ArrayList<Pod>();
        for (var pod : workloads.pods()) {
            pods.add(((PriorityAdmission.Admitted) admission.admit(pod.pod())).pod());
        }
        // The extender reads a job's size from its object once its informer has it; explain read it from the listing.
        for (var pod : explained.json().path("pods")) {
            if (!pod.path("job").isNull() && pod.path("job").path("members").isInt()) {
                var created = pods.stream().filter(p -> p.getMetadata().getName().equals(pod.path("name").asText())).findFirst().orElseThrow();
                var job = JobMembershipReader.read(created, new ArrayList<>()).orElseThrow();
                Awaitility.await("the size of job " + job.key()).dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                        .until(() -> extender.jobSizes().membersOf(job).isPresent());
            }
        }
        pods.forEach(pod -> cluster.client().resource(pod).create());
        return pods;
    }

    /** Before the next pod is tried: the extender's informers show the bound pod's GPUs taken, as explain's copy does at once. */
    private void awaitSeenByTheExtender(Decision decision) {
        if (!(decision instanceof Decision.Bound bound)) {
            return;
        }
        var namespaceAndName = bound.pod().split("/", 2);
        var pod = cluster.client().pods().inNamespace(namespaceAndName[0]).withName(namespaceAndName[1]).get();
        if (devices(pod).isEmpty()) {
            return;
        }
        Awaitility.await("the extender sees " + bound.pod() + " bound").dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> extender.view().boundPods(bound.node()).stream().anyMatch(held -> held.uid().equals(pod.getMetadata().getUid())
                        && !held.binding()));
    }

    /**
     * No sample's pods left, every GPU free in its device plugin's list, and an extender started afresh: one whose informers
     * never saw the pods go, so it remembers no GPU as just released, as explain's one listing does not.
     */
    private void emptyCluster() throws Exception {
        for (var namespace : namespaces) {
            cluster.client().pods().inNamespace(namespace).delete();
        }
        Awaitility.await("every GPU free again").dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(this::everyGpuFree);
        if (extender != null) {
            cluster.stopExtender(extender);
        }
        extender = cluster.startExtender(configuration.extender());
    }

    private boolean everyGpuFree() throws InventoryFormatException {
        if (!cluster.client().pods().inAnyNamespace().list().getItems().isEmpty()) {
            return false;
        }
        for (var node : cluster.client().nodes().list().getItems()) {
            var annotations = node.getMetadata().getAnnotations();
            if (annotations == null || !annotations.containsKey(HetgpuKeys.ANNOTATION_INVENTORY)) {
                continue;
            }
            var devices = new InventoryCodec().decode(annotations.get(HetgpuKeys.ANNOTATION_INVENTORY)).size();
            if (new FreeDevicesCodec().decode(annotations.get(HetgpuKeys.ANNOTATION_FREE)).uuids().size() != devices) {
                return false;
            }
        }
        return true;
    }

    private static List<String> devices(Pod pod) {
        var annotations = pod.getMetadata().getAnnotations();
        if (annotations == null || !annotations.containsKey(HetgpuKeys.POD_GPU_DEVICES)) {
            return List.of();
        }
        try {
            return new DeviceAssignmentCodec().decode(annotations.get(HetgpuKeys.POD_GPU_DEVICES)).devices();
        } catch (InventoryFormatException e) {
            throw new AssertionError(e);
        }
    }
}
