package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.cluster.TrainingOperator;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A burst of 20 jobs of mixed sizes arriving at once (TFJobs with parameter servers, PyTorchJobs, {@code hetgpu.io/job}
 * gangs and single pods, at three priorities) on a cluster of 32 GPUs that holds a few of them at a time, scheduled over
 * HTTP by the real extender configured from {@code manifests/} (the bind verb on) with a short {@code jobPlanDeadline},
 * and a scheduler that retries pods after kube-scheduler's backoff. Jobs end once they have run whole, making room for
 * the others. After every scheduling round: no job is half-placed for longer than the deadline, no pod that waits holds
 * a GPU record, and no GPU is held by two pods, by the extender's records, kubelet's allocations or the devices
 * containers are given. In the end every job has run whole.
 */
class WholeJobBurstTest {

    /** Short, to be seen at work within the test; above the manifests' httpTimeout (5 s), as the configuration requires. */
    private static final Duration DEADLINE = Duration.ofSeconds(10);
    /**
     * kube-scheduler's backoff (1 s, doubled up to 10 s, as shipped) scaled to the short deadline: a pod refused once
     * comes back within a fifth of it, as the shipped backoff's 10 s is a sixth of the shipped 60 s.
     */
    private static final Duration BACKOFF = Duration.ofMillis(200);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);
    private static final int JOBS = 20;

    @TempDir
    Path dir;

    /** One job as its controller will create it: its pods in creation order. */
    private record Arrival(String job, List<Pod> pods) {
    }

    @Test
    void aBurstOfTwentyJobsNeverLeavesAJobHalfPlacedPastItsDeadlineNorGivesAGpuTwice() throws Exception {
        try (var cluster = TestCluster.start(List.of(
                NodeSpec.gpu("dgx-a100-1", "rack-a", "zone-1", "dgx-a100"), NodeSpec.cpu("cpu-a1", "rack-a", "zone-1"),
                NodeSpec.gpu("dgx1-v100-1", "rack-b", "zone-1", "dgx1-v100"), NodeSpec.gpu("dgx1-v100-2", "rack-b", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("t4-1", "rack-c", "zone-2", "t4-4x"), NodeSpec.gpu("k80-1", "rack-c", "zone-2", "k80-4x"),
                NodeSpec.cpu("cpu-c1", "rack-c", "zone-2")), dir, message -> { })) {
            var operator = new TrainingOperator(cluster.client()).install();
            var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
            var extender = cluster.startExtender(configuration.extender().withJobPlanDeadline(DEADLINE));
            var settings = configuration.schedulerCalling(extender);
            assertThat(settings.extenders().getFirst().bindVerb()).as("manifests/ configure the bind verb").isNotEmpty();
            assertThat(DEADLINE).isGreaterThan(settings.extenders().getFirst().httpTimeout());
            var scheduler = new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), 7).backingOff(BACKOFF, MAX_BACKOFF);

            var random = new Random(20);
            var arrivals = new ArrayList<Arrival>();
            for (int i = 0; i < JOBS; i++) {
                arrivals.add(arrival(operator, i, random));
            }
            JobProgress.awaitSizesKnown(extender, arrivals.stream().flatMap(arrival -> arrival.pods().stream())
                    .filter(pod -> pod.getMetadata().getLabels().containsKey(HetgpuKeys.KUBEFLOW_JOB)).toList());
            // Twenty controllers create their pods at once: the pods reach the API server interleaved, in three waves while
            // the scheduler is already at work.
            var creations = interleaved(arrivals, random);
            var waves = List.of(creations.subList(0, creations.size() / 3), creations.subList(creations.size() / 3, 2 * creations.size() / 3),
                    creations.subList(2 * creations.size() / 3, creations.size()));

            var progress = new JobProgress(cluster.client());
            var holders = new GpuHolders(cluster);
            var halfSince = new HashMap<String, Instant>();
            var ranWhole = new HashSet<String>();
            var ended = new HashSet<String>();
            var rounds = new int[1];
            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (rounds[0] < waves.size()) {
                    waves.get(rounds[0]).forEach(pod -> cluster.client().resource(pod).create());
                }
                rounds[0]++;
                scheduler.scheduleRound();
                holders.awaitAdmitted();
                holders.assertNoGpuGivenTwice();
                var now = Instant.now();
                for (var state : progress.now().values()) {
                    for (var pod : state.pods()) {
                        if (!GpuHolders.isBound(pod)) {
                            assertThat(GpuHolders.record(pod)).as("a GPU record on %s, which waits", pod.getMetadata().getName()).isNull();
                        }
                    }
                    if (!state.halfPlaced()) {
                        halfSince.remove(state.job());
                    } else {
                        var since = halfSince.computeIfAbsent(state.job(), job -> firstBound(state, now));
                        assertThat(Duration.between(since, now)).as("how long %s has been half-placed (%d of %d pods bound)", state.job(),
                                state.bound(), state.pods().size()).isLessThanOrEqualTo(DEADLINE);
                    }
                    if (state.whole() && state.pods().size() == sizeOf(arrivals, state.job()) && !ranWhole.add(state.job())) {
                        // Whole and running since the last round: the job ends, as training does, and its pods go.
                        state.pods().forEach(pod -> cluster.client().resource(pod).delete());
                        ended.add(state.job());
                    }
                }
                return ended.size() == JOBS;
            });
            assertThat(ended).hasSize(JOBS);
        }
    }

    private static int sizeOf(List<Arrival> arrivals, String job) {
        return arrivals.stream().filter(arrival -> arrival.job().equals(job)).findFirst().orElseThrow().pods().size();
    }

    /** When the half-placed job's first pod was bound, by the extender's record; now for a job whose bound pods have no GPUs. */
    private static Instant firstBound(JobProgress.State state, Instant now) {
        var first = now;
        for (var pod : state.pods()) {
            try {
                var record = GpuHolders.isBound(pod) ? GpuHolders.record(pod) : null;
                if (record != null && record.boundAt().isBefore(first)) {
                    first = record.boundAt();
                }
            } catch (io.hetgpu.gpu.inventory.InventoryFormatException e) {
                throw new AssertionError("the extender's record on " + pod.getMetadata().getName() + " cannot be read", e);
            }
        }
        return first;
    }

    /**
     * Job {@code i}: a TFJob (1-2 parameter servers, 2-4 workers of 1-2 GPUs), a PyTorchJob (a master and 1-3 workers of 1, 2
     * or 4 GPUs), a gang of 2-4 pods named by {@code hetgpu.io/job}, or a single pod; at priority 1000, 0 or -100.
     */
    private static Arrival arrival(TrainingOperator operator, int i, Random random) {
        int priority = List.of(1000, 0, -100).get(random.nextInt(3));
        var pods = new ArrayList<Pod>();
        switch (i % 4) {
            case 0 -> {
                var replicas = new LinkedHashMap<String, Integer>();
                replicas.put("PS", 1 + random.nextInt(2));
                replicas.put("Worker", 2 + random.nextInt(3));
                var job = operator.submit(TrainingOperator.Kind.TF_JOB, NS, "tf-" + i, replicas);
                int gpus = 1 + random.nextInt(2);
                for (int r = 0; r < replicas.get("PS"); r++) {
                    pods.add(TrainingOperator.pod(job, "PS", r, TrainingOperator.Replica.of(0, priority), "hetgpu-scheduler"));
                }
                for (int r = 0; r < replicas.get("Worker"); r++) {
                    pods.add(TrainingOperator.pod(job, "Worker", r, TrainingOperator.Replica.of(gpus, priority), "hetgpu-scheduler"));
                }
                return new Arrival(NS + "/" + job.name(), pods);
            }
            case 1 -> {
                int workers = 1 + random.nextInt(3);
                var job = operator.submit(TrainingOperator.Kind.PYTORCH_JOB, NS, "pt-" + i, Map.of("Master", 1, "Worker", workers));
                var replica = TrainingOperator.Replica.of(List.of(1, 2, 4).get(random.nextInt(3)), priority);
                pods.add(TrainingOperator.pod(job, "Master", 0, replica, "hetgpu-scheduler"));
                for (int r = 0; r < workers; r++) {
                    pods.add(TrainingOperator.pod(job, "Worker", r, replica, "hetgpu-scheduler"));
                }
                return new Arrival(NS + "/" + job.name(), pods);
            }
            default -> {
                int size = i % 4 == 2 ? 2 + random.nextInt(3) : 1;
                int gpus = i % 4 == 2 ? 1 + random.nextInt(2) : List.of(1, 2, 4, 8).get(random.nextInt(4));
                var job = (size == 1 ? "solo-" : "gang-") + i;
                for (int r = 0; r < size; r++) {
                    pods.add(hetgpuMember(job, job + "-" + r, size, gpus, priority));
                }
                return new Arrival(NS + "/" + job, pods);
            }
        }
    }

    /** A pod of a job named by {@code hetgpu.io/job}, its member count stated with {@code hetgpu.io/job-size}. */
    private static Pod hetgpuMember(String job, String name, int size, int gpus, int priority) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .addToLabels(HetgpuKeys.POD_JOB, job).addToAnnotations(HetgpuKeys.POD_JOB_SIZE, Integer.toString(size)).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("train").withNewResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(gpus))).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build();
    }

    /** Every job's pods in one creation order, each job's in its own order, the jobs taking turns at random. */
    private static List<Pod> interleaved(List<Arrival> arrivals, Random random) {
        var left = new ArrayList<List<Pod>>();
        arrivals.forEach(arrival -> left.add(new ArrayList<>(arrival.pods())));
        var order = new ArrayList<Pod>();
        while (!left.isEmpty()) {
            int turn = random.nextInt(left.size());
            order.add(left.get(turn).removeFirst());
            if (left.get(turn).isEmpty()) {
                left.remove(turn);
            }
        }
        return order;
    }
}
