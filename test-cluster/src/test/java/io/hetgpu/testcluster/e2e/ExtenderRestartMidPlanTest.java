package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.Extender;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.cluster.TrainingOperator;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extender restarts (its container crashes, or is upgraded) while a job's plan is in flight: some of the job's pods
 * bound with their devices recorded, the others still held seats in the stopped extender's memory only. The new
 * extender, on the port kube-scheduler calls, seats the rest of the job around the pods already bound before it answers
 * any other pod, and no GPU is given twice.
 */
class ExtenderRestartMidPlanTest {

    private static final String JOB = "llama";

    @TempDir
    Path dir;

    private TestCluster cluster;
    private DeployedConfiguration configuration;
    private Extender extender;
    /** Where kube-scheduler calls the extender: the port of the one started first, which a restarted one takes over. */
    private int extenderPort;
    private SchedulerDriver scheduler;
    private GpuHolders holders;
    private JobProgress progress;

    @BeforeEach
    void start() throws Exception {
        cluster = TestCluster.start(List.of(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("dgx-2", "rack-a", "zone-1", "dgx1-v100")), dir, message -> { });
        var operator = new TrainingOperator(cluster.client()).install();
        configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        extender = cluster.startExtender(configuration.extender());
        extenderPort = extender.port();
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HttpClient.newHttpClient(), 1);
        holders = new GpuHolders(cluster);
        progress = new JobProgress(cluster.client());
        // A PyTorchJob of 16 GPUs: a master and 3 workers of 4 GPUs, the whole of both servers.
        var job = operator.submit(TrainingOperator.Kind.PYTORCH_JOB, NS, JOB, Map.of("Master", 1, "Worker", 3));
        var pods = new ArrayList<Pod>();
        pods.add(TrainingOperator.pod(job, "Master", 0, TrainingOperator.Replica.of(4, 0), "hetgpu-scheduler"));
        for (int i = 0; i < 3; i++) {
            pods.add(TrainingOperator.pod(job, "Worker", i, TrainingOperator.Replica.of(4, 0), "hetgpu-scheduler"));
        }
        JobProgress.awaitSizesKnown(extender, pods);
        pods.forEach(pod -> cluster.client().resource(pod).create());
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * kube-scheduler binds the job's pods one after another; after the second, the extender stops. Its calls for the
     * other two fail, and they wait. Returns the devices recorded for the two bound ones, by pod name.
     */
    private Map<String, List<String>> stopTheExtenderAfterTwoPodsAreBound() throws Exception {
        var bound = new ArrayList<String>();
        var round = scheduler.scheduleRound(decision -> {
            if (decision instanceof Decision.Bound && bound.size() < 2) {
                bound.add(decision.pod());
                if (bound.size() == 2) {
                    try {
                        cluster.stopExtender(extender);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        });
        assertThat(round).hasSize(4);
        assertThat(round.subList(2, 4)).as("the attempts while the extender is down").allMatch(Decision.Failed.class::isInstance);
        holders.awaitAdmitted();
        var state = progress.now().get(NS + "/" + JOB);
        assertThat(state.bound()).isEqualTo(2);
        var recorded = new HashMap<String, List<String>>();
        for (var pod : state.pods()) {
            var record = GpuHolders.record(pod);
            if (GpuHolders.isBound(pod)) {
                assertThat(record.devices()).hasSize(4);
                recorded.put(pod.getMetadata().getName(), record.devices());
            } else {
                assertThat(record).as("a GPU record on %s, which waits", pod.getMetadata().getName()).isNull();
            }
        }
        return recorded;
    }

    /** The extender comes back on the port kube-scheduler calls, with nothing in memory. */
    private void restartTheExtender() {
        extender = cluster.startExtender(configuration.extender(), extenderPort);
    }

    /** Scheduling rounds until the job runs whole: after each, no GPU is held twice. */
    private void roundsUntilTheJobRunsWhole() {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            return progress.now().get(NS + "/" + JOB).whole();
        });
    }

    /** The pods bound before the restart kept their devices. */
    private void assertKept(Map<String, List<String>> before) throws Exception {
        for (var entry : before.entrySet()) {
            var pod = cluster.client().pods().inNamespace(NS).withName(entry.getKey()).get();
            assertThat(GpuHolders.record(pod).devices()).as("the devices of %s", entry.getKey()).isEqualTo(entry.getValue());
        }
    }

    @Test
    void theRestartedExtenderPlacesTheRestOfTheJobAroundThePodsAlreadyBound() throws Exception {
        var before = stopTheExtenderAfterTwoPodsAreBound();
        restartTheExtender();

        roundsUntilTheJobRunsWhole();

        assertKept(before);
        assertThat(progress.now().get(NS + "/" + JOB).pods()).extracting(pod -> pod.getSpec().getNodeName())
                .containsOnly("dgx-1", "dgx-2").hasSize(4);
    }

    @Test
    void aPodThatComesFirstAfterTheRestartFindsTheWaitingPodsSeatsHeldAndTheJobRunsWhole() throws Exception {
        var before = stopTheExtenderAfterTwoPodsAreBound();
        // While the extender is down a 4-GPU pod of higher priority arrives: kube-scheduler tries it first when the
        // extender is back. The stopped extender's plan held the free GPUs for the job's last two pods; had the restarted
        // one forgotten them, this pod would take half of them and the job would wait half-bound, holding 8 GPUs.
        new TrainingPods(cluster.client()).submit("urgent", 4, 1000, Map.of());
        restartTheExtender();

        var first = scheduler.scheduleRound().getFirst();
        holders.awaitAdmitted();
        holders.assertNoGpuGivenTwice();
        roundsUntilTheJobRunsWhole();

        assertThat(first.pod()).isEqualTo(NS + "/urgent");
        assertThat(first).isNotInstanceOf(Decision.Bound.class);
        assertKept(before);
        var urgent = cluster.client().pods().inNamespace(NS).withName("urgent").get();
        assertThat(urgent.getSpec().getNodeName()).as("the urgent pod waits").isNull();
        assertThat(GpuHolders.record(urgent)).as("holding nothing").isNull();
    }
}
