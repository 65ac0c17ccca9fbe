package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Preemption for a whole job, over HTTP, with kube-scheduler's DefaultPreemption calling the real extender's preempt verb:
 * two 8-GPU servers full of low-priority work, one of them a job of four pods. kube-scheduler preempts for one pod at a
 * time and knows no jobs; the extender keeps only the candidates whose evictions let the whole job start, so nothing is
 * evicted for a job that would not start even so, a victim job goes whole, and the urgent job is bound whole.
 */
class JobPreemptionEndToEndTest {

    @TempDir
    Path dir;

    private TestCluster cluster;
    private SchedulerDriver scheduler;
    private TrainingPods pods;
    private GpuHolders holders;

    @BeforeEach
    void fillTwoServers() throws Exception {
        cluster = TestCluster.start(List.of(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("dgx-2", "rack-a", "zone-1", "dgx1-v100")), dir, message -> { });
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var extender = cluster.startExtender(configuration.extender());
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HttpClient.newHttpClient(), 1)
                .preempting(1, TieBreak.random(new Random(1)));
        pods = new TrainingPods(cluster.client());
        holders = new GpuHolders(cluster);
        // A low-priority job of four 2-GPU pods, placed whole on one server, and four 2-GPU pods alone on the other.
        for (int i = 0; i < 4; i++) {
            member("sweep", "sweep-" + i, 2, -100, 4);
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            scheduler.scheduleRound();
            return boundNames().containsAll(Set.of("sweep-0", "sweep-1", "sweep-2", "sweep-3"));
        });
        for (int i = 0; i < 4; i++) {
            pods.submit("batch-" + i, 2, -100, Map.of());
            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        }
        for (var name : boundNames()) {
            pods.awaitRunning(name);
        }
        holders.awaitAdmitted();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void anUrgentJobOfBothServersEvictsEverythingOverItsAttemptsAndIsBoundWhole() {
        member("urgent", "urgent-0", 8, 1000, 2);
        member("urgent", "urgent-1", 8, 1000, 2);

        var nominatedOn = roundsUntilBound("urgent-0", "urgent-1");

        // kube-scheduler evicts on one node per attempt: the job's attempts evicted on both.
        assertThat(nominatedOn).containsExactlyInAnyOrder("dgx-1", "dgx-2");
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems()).extracting(pod -> pod.getMetadata().getName())
                .containsExactlyInAnyOrder("urgent-0", "urgent-1");
        assertThat(nodeOf("urgent-0")).isNotEqualTo(nodeOf("urgent-1"));
    }

    @Test
    void anUrgentJobThatWouldNotFitEvenWithEverythingEvictedEvictsNothing() {
        // 24 GPUs on a cluster of 16: each pod alone would fit after evicting one server, which is what kube-scheduler
        // alone would do, for a job that could never start.
        for (int i = 0; i < 3; i++) {
            member("too-big", "too-big-" + i, 8, 1000, 3);
        }

        for (int round = 0; round < 3; round++) {
            assertThat(scheduler.scheduleRound()).hasSize(3).allMatch(Decision.Unschedulable.class::isInstance);
        }
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems()).filteredOn(pod -> !pod.getMetadata().getName().startsWith("too-big"))
                .hasSize(8).allSatisfy(pod -> assertThat(pod.getMetadata().getDeletionTimestamp()).isNull());
    }

    @Test
    void anUrgentJobThatFitsOneServerEvictsOnOneServerOnly() {
        // Either server frees 8 GPUs, and the two plans rank alike on cards, nodes and racks: on dgx-1 the victims are
        // the four pods of one job (counted whole, as its work restarts whole whichever pod goes), on dgx-2 four pods
        // alone. The work they lose decides which; the other server loses nothing, and the job runs on the one chosen.
        member("urgent", "urgent-0", 4, 1000, 2);
        member("urgent", "urgent-1", 4, 1000, 2);

        var nominatedOn = roundsUntilBound("urgent-0", "urgent-1");

        assertThat(nominatedOn).hasSize(1);
        var evictedServer = nominatedOn.iterator().next();
        assertThat(nodeOf("urgent-0")).isEqualTo(evictedServer).isEqualTo(nodeOf("urgent-1"));
        var other = evictedServer.equals("dgx-1") ? "dgx-2" : "dgx-1";
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems()).filteredOn(pod -> other.equals(pod.getSpec().getNodeName()))
                .hasSize(4).allSatisfy(pod -> assertThat(pod.getMetadata().getDeletionTimestamp()).isNull());
    }

    /**
     * Scheduling rounds, with kube-scheduler's preemption, until the pods named are bound (a member in backoff is bound
     * a round or two after the others, to the seat its job's plan holds): after each, no GPU is held twice. Returns the
     * nodes preemption evicted on.
     */
    private Set<String> roundsUntilBound(String... names) {
        var nominatedOn = new HashSet<String>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            for (var decision : scheduler.scheduleRound()) {
                if (decision instanceof Decision.Nominated nominated) {
                    nominatedOn.add(nominated.node());
                }
            }
            holders.awaitAdmitted();
            holders.assertNoGpuGivenTwice();
            return boundNames().containsAll(Arrays.asList(names));
        });
        return nominatedOn;
    }

    /** A pod of job {@code job} of {@code size} members, labelled as hetgpu's own convention names it. */
    private void member(String job, String name, int gpus, int priority, int size) {
        pods.submit(name, gpus, priority, Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(size)));
        cluster.client().pods().inNamespace(NS).withName(name)
                .edit(pod -> new PodBuilder(pod).editMetadata().addToLabels(HetgpuKeys.POD_JOB, job).endMetadata().build());
    }

    private Set<String> boundNames() {
        var bound = new HashSet<String>();
        for (Pod pod : cluster.client().pods().inNamespace(NS).list().getItems()) {
            if (GpuHolders.isBound(pod) && pod.getMetadata().getDeletionTimestamp() == null) {
                bound.add(pod.getMetadata().getName());
            }
        }
        return bound;
    }

    private String nodeOf(String name) {
        return cluster.client().pods().inNamespace(NS).withName(name).get().getSpec().getNodeName();
    }
}
