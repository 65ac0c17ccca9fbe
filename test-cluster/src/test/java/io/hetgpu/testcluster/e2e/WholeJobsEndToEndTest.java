package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.Extender;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.cluster.TrainingOperator;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole jobs over HTTP, with the real extender configured from {@code manifests/} (the bind verb on, as shipped), device
 * plugins and simulated kubelets: Kubeflow training jobs whose pods the training operator creates, placed all at once
 * where all of them fit best, or not at all.
 */
class WholeJobsEndToEndTest {

    private static final String DATA_CLAIM = "imagenet";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private TestCluster cluster;
    private Extender extender;
    private SchedulerDriver scheduler;
    private TrainingOperator operator;

    private void start(NodeSpec... nodes) throws Exception {
        cluster = TestCluster.start(List.of(nodes), dir, message -> { });
        // The operator's kinds are served before the extender starts: it looks them up in discovery then.
        operator = new TrainingOperator(cluster.client()).install();
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        extender = cluster.startExtender(configuration.extender());
        var settings = configuration.schedulerCalling(extender);
        assertThat(settings.extenders().getFirst().bindVerb()).as("manifests/ configure the bind verb").isNotEmpty();
        scheduler = new SchedulerDriver(cluster.client(), settings, HTTP, 1);
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** The operator's pods of {@code jobs}, one replica type after another, each type for every job in turn, as it reconciles them at once. */
    private List<Pod> createPods(List<TrainingOperator.Job> jobs, Map<String, TrainingOperator.Replica> replicas) {
        var pods = new ArrayList<Pod>();
        for (var type : replicas.keySet()) {
            for (var job : jobs) {
                for (int i = 0; i < job.replicas().getOrDefault(type, 0); i++) {
                    pods.add(TrainingOperator.pod(job, type, i, replicas.get(type), "hetgpu-scheduler"));
                }
            }
        }
        JobProgress.awaitSizesKnown(extender, pods);
        return pods.stream().map(pod -> cluster.client().resource(pod).create()).toList();
    }

    /** The FailedScheduling messages the scheduler wrote for the pod. */
    private List<String> failures(String pod) {
        return cluster.client().v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> "FailedScheduling".equals(e.getReason()) && pod.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getMessage()).toList();
    }

    /** The extender's gauge of GPUs its job plans hold, read from its metrics port as Prometheus reads it. */
    private double gpusHeldByPlans() throws Exception {
        var metrics = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + extender.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return metrics.lines().filter(line -> line.startsWith("hetgpu_extender_job_plan_gpus_held")).mapToDouble(line ->
                Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).findFirst().orElseThrow();
    }

    @Test
    void twoEightGpuJobsArrivingTogetherOnTwoFourGpuServersOneRunsWholeAndTheOtherWaitsHoldingNothing() throws Exception {
        start(NodeSpec.gpu("t4-1", "rack-a", "zone-1", "t4-4x"), NodeSpec.gpu("t4-2", "rack-a", "zone-1", "t4-4x"));
        var jobs = List.of(operator.submit(TrainingOperator.Kind.PYTORCH_JOB, NS, "llama", Map.of("Master", 1, "Worker", 1)),
                operator.submit(TrainingOperator.Kind.PYTORCH_JOB, NS, "bert", Map.of("Master", 1, "Worker", 1)));
        var replica = TrainingOperator.Replica.of(4, 0);
        // Interleaved, as two operator workers create them: llama's master, bert's master, llama's worker, bert's worker.
        createPods(jobs, Map.of("Master", replica));
        createPods(jobs, Map.of("Worker", replica));
        var progress = new JobProgress(cluster.client());
        var holders = new GpuHolders(cluster);

        // kube-scheduler tries the pending pods again and again; after every attempt, at most one job holds GPUs.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            var states = progress.now();
            assertThat(states.values()).as("jobs holding GPUs").filteredOn(state -> state.bound() > 0).hasSizeLessThanOrEqualTo(1);
            return states.values().stream().anyMatch(JobProgress.State::whole);
        });
        for (int attempt = 0; attempt < 2; attempt++) {
            scheduler.scheduleRound();
        }

        var states = progress.now();
        var running = states.values().stream().filter(JobProgress.State::whole).toList();
        var waiting = states.values().stream().filter(state -> state.bound() == 0).toList();
        assertThat(running).singleElement().satisfies(job -> assertThat(job.pods()).extracting(pod -> pod.getSpec().getNodeName())
                .containsExactlyInAnyOrder("t4-1", "t4-2"));
        assertThat(waiting).singleElement().satisfies(job -> {
            for (var pod : job.pods()) {
                var name = pod.getMetadata().getName();
                assertThat(GpuHolders.record(pod)).as("a GPU record on %s", name).isNull();
                // Its first attempt reached the extender while a server still had room: what the job lacks, and that
                // nothing is held for it. Later attempts find both servers full before the extender is asked.
                assertThat(failures(name)).as("why %s waits", name).isNotEmpty();
            }
            assertThat(job.pods().stream().flatMap(pod -> failures(pod.getMetadata().getName()).stream()))
                    .anySatisfy(why -> assertThat(why).contains("job " + job.job() + ": 2 pods need 8 GPUs", "no GPU is held"));
        });
        assertThat(gpusHeldByPlans()).as("GPUs the extender's plans hold once the running job is bound").isZero();

        // The running job ends; the waiting one is placed whole in the attempts that follow.
        running.getFirst().pods().forEach(pod -> cluster.client().resource(pod).delete());
        var waitingJob = waiting.getFirst().job();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            var state = progress.now().get(waitingJob);
            assertThat(state.halfPlaced()).as("%s half-placed", waitingJob).isFalse();
            return state.whole();
        });
    }

    /** A 2-ps / 4-worker TFJob reading {@value #DATA_CLAIM}, which lives in rack-b: the same servers in two racks. */
    private TrainingOperator.Job tensorflowJobOnTwoRacks() throws Exception {
        start(NodeSpec.gpu("dgx-a", "rack-a", "zone-1", "dgx1-v100"), NodeSpec.cpu("cpu-a", "rack-a", "zone-1"),
                NodeSpec.gpu("dgx-b", "rack-b", "zone-1", "dgx1-v100"), NodeSpec.cpu("cpu-b", "rack-b", "zone-1"));
        cluster.client().resource(new PersistentVolumeBuilder().withNewMetadata().withName("imagenet-nfs")
                .addToAnnotations(HetgpuKeys.DATA_LOCALITY, "rack=rack-b").endMetadata()
                .withNewSpec().addToCapacity("storage", new Quantity("2Ti")).withAccessModes("ReadOnlyMany")
                .withNewNfs().withServer("nfs-b.storage.local").withPath("/imagenet").endNfs()
                .withNewClaimRef().withNamespace(NS).withName(DATA_CLAIM).endClaimRef().endSpec()
                .withNewStatus().withPhase("Bound").endStatus().build()).create();
        cluster.client().resource(new PersistentVolumeClaimBuilder().withNewMetadata().withName(DATA_CLAIM).withNamespace(NS).endMetadata()
                .withNewSpec().withAccessModes("ReadOnlyMany").withVolumeName("imagenet-nfs")
                .withNewResources().addToRequests("storage", new Quantity("2Ti")).endResources().endSpec()
                .withNewStatus().withPhase("Bound").endStatus().build()).create();
        return operator.submit(TrainingOperator.Kind.TF_JOB, NS, "resnet", Map.of("PS", 2, "Worker", 4));
    }

    /** The TFJob's pods as the operator creates them: parameter servers (no GPU), then workers of 2 GPUs, all reading the data. */
    private List<Pod> createTensorflowPods(TrainingOperator.Job job) {
        var replicas = new java.util.LinkedHashMap<String, TrainingOperator.Replica>();
        replicas.put("PS", new TrainingOperator.Replica(0, 1000, Map.of(), DATA_CLAIM));
        replicas.put("Worker", new TrainingOperator.Replica(2, 1000, Map.of(), DATA_CLAIM));
        return createPods(List.of(job), replicas);
    }

    private String rackOf(String node) {
        return cluster.nodes().stream().filter(spec -> spec.name().equals(node)).findFirst().orElseThrow().rack();
    }

    @Test
    void aTwoPsFourWorkerTensorflowJobLandsWholeInTheDataRack() throws Exception {
        var job = tensorflowJobOnTwoRacks();
        createTensorflowPods(job);
        var holders = new GpuHolders(cluster);

        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            return new JobProgress(cluster.client()).now().get(NS + "/resnet").whole();
        });

        var pods = new JobProgress(cluster.client()).now().get(NS + "/resnet").pods();
        assertThat(pods).hasSize(6).allSatisfy(pod -> assertThat(rackOf(pod.getSpec().getNodeName()))
                .as("the rack of %s", pod.getMetadata().getName()).isEqualTo("rack-b"));
        assertThat(pods).filteredOn(pod -> pod.getMetadata().getName().contains("-worker-"))
                .hasSize(4).allSatisfy(pod -> assertThat(GpuHolders.record(pod).devices()).hasSize(2));
        assertThat(pods).filteredOn(pod -> pod.getMetadata().getName().contains("-ps-")).hasSize(2)
                .allSatisfy(pod -> assertThat(GpuHolders.gpus(pod)).isZero());
    }

    @Test
    void aTensorflowJobThatCannotBePlacedWholeWaitsWithNothingBoundAndNoGpuHeld() throws Exception {
        var job = tensorflowJobOnTwoRacks();
        // Other work already runs: 6 GPUs free in all (2 on dgx-b, 4 on dgx-a), where the job's workers need 8.
        var pods = new TrainingPods(cluster.client());
        pods.submit("serving-b", 4, 0, Map.of(), Map.of("kubernetes.io/hostname", "dgx-b"));
        pods.submit("notebook-b", 2, 0, Map.of(), Map.of("kubernetes.io/hostname", "dgx-b"));
        pods.submit("serving-a", 4, 0, Map.of(), Map.of("kubernetes.io/hostname", "dgx-a"));
        assertThat(scheduler.scheduleRound()).hasSize(3).allMatch(Decision.Bound.class::isInstance);
        var holders = new GpuHolders(cluster);
        holders.awaitAdmitted();
        var created = createTensorflowPods(job);

        // Every pod's attempt answered with what the job lacks; pods that could run alone (the parameter servers, 3 of
        // the workers) are not placed either.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            return created.stream().allMatch(pod -> failures(pod.getMetadata().getName()).stream()
                    .anyMatch(why -> why.contains("job " + NS + "/resnet: 6 pods need 8 GPUs")));
        });
        var state = new JobProgress(cluster.client()).now().get(NS + "/resnet");
        assertThat(state.bound()).as("pods of the job bound").isZero();
        for (var pod : state.pods()) {
            assertThat(GpuHolders.record(pod)).as("a GPU record on %s", pod.getMetadata().getName()).isNull();
            assertThat(failures(pod.getMetadata().getName())).filteredOn(why -> why.contains("job " + NS + "/resnet: 6 pods need 8 GPUs"))
                    .allSatisfy(why -> assertThat(why).contains("no GPU is held"));
        }
        assertThat(gpusHeldByPlans()).isZero();
        // Held for nothing: a 2-GPU pod submitted now gets free GPUs at once.
        pods.submit("notebook-a", 2, 0, Map.of(), Map.of("kubernetes.io/hostname", "dgx-a"));
        assertThat(scheduler.scheduleRound().stream().filter(decision -> decision.pod().equals(NS + "/notebook-a")))
                .singleElement().isInstanceOf(Decision.Bound.class);

        // Once the work in the data's rack ends, the job lands whole there.
        for (var done : List.of("serving-b", "notebook-b")) {
            cluster.client().pods().inNamespace(NS).withName(done).delete();
        }
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            return new JobProgress(cluster.client()).now().get(NS + "/resnet").whole();
        });
        assertThat(new JobProgress(cluster.client()).now().get(NS + "/resnet").pods())
                .extracting(pod -> rackOf(pod.getSpec().getNodeName())).containsOnly("rack-b");
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems().stream().map(pod -> pod.getMetadata().getName())
                .collect(Collectors.toSet())).contains("serving-a", "notebook-a");
    }
}
