package io.hetgpu.testcluster.e2e;

import static io.hetgpu.testcluster.e2e.TrainingPods.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kube-scheduler's preemption over HTTP with the real extender, device plugins and kubelets configured from
 * {@code manifests/}: two full GPU servers, each running four 2-GPU low-priority pods, and an urgent pod that needs
 * eight NVLink-connected GPUs. Where kube-scheduler alone evicts by its own criteria (the last test), hetgpu decides which.
 */
class PreemptionEndToEndTest {

    @TempDir
    Path dir;

    @Test
    void theExtenderRefusesAServerNoEvictionGivesNvlinkSoTheVictimsAreTheOthers() throws Exception {
        // Two V100 servers, one with NVLink (DGX-1), one without (PCIe): the extender's filter refuses the PCIe one for
        // good, so kube-scheduler's preemption does not even consider it.
        try (var cluster = TestCluster.start(List.of(NodeSpec.gpu("dgx", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("pcie", "rack-b", "zone-1", "v100-pcie-8x")), dir, message -> { })) {
            var scheduler = scheduler(cluster);
            fill(cluster, scheduler, i -> Map.of());
            urgentEvictsOnAndRunsOn(cluster, scheduler, "dgx", "pcie");
        }
    }

    @Test
    void theUrgentPodsVictimsAreOnTheNewestCards() throws Exception {
        // A DGX-1 (V100) and a DGX A100, both NVLink. The A100s' pods start first, so kube-scheduler alone would evict
        // the DGX-1's (its last criterion: the victims that started latest lose the least work); hetgpu's preempt verb
        // keeps the candidate that gives the urgent pod the newest cards (without that rule this test sees "dgx1").
        try (var cluster = dgx1AndA100()) {
            var scheduler = scheduler(cluster);
            fill(cluster, scheduler, A100_PODS_FIRST);
            urgentEvictsOnAndRunsOn(cluster, scheduler, "a100", "dgx1");
            // The extender tells the urgent pod's owner what it chose and why.
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.client().v1().events().inNamespace(NS).list().getItems().stream()
                    .anyMatch(e -> "HetgpuPreemption".equals(e.getReason()) && "urgent".equals(e.getInvolvedObject().getName())
                            && e.getMessage().startsWith("hetgpu kept 1 of 2 nodes proposed for preemption: evicting 4 pods on a100 frees 8 A100 (NVLink)")));
            // And each victim why it goes.
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.client().v1().events().inNamespace(NS).list().getItems().stream()
                    .filter(e -> "HetgpuPreemptionVictim".equals(e.getReason()))
                    .filter(e -> e.getMessage().startsWith("hetgpu chose a100 for preemption by default/urgent (priority 1000): evicting its 4 pods "
                            + "frees 8 A100 (NVLink); "))
                    .map(e -> e.getInvolvedObject().getName()).collect(java.util.stream.Collectors.toSet())
                    .equals(java.util.Set.of("batch-0", "batch-1", "batch-2", "batch-3")));
        }
    }

    @Test
    void kubeSchedulerAloneEvictsThePodsThatStartedLast() throws Exception {
        // The same cluster and pods, preempted by kube-scheduler without the extender: its own criteria tie until the
        // last one, so the DGX-1's later-started pods go, and the urgent pod would get V100s.
        try (var cluster = dgx1AndA100()) {
            fill(cluster, scheduler(cluster), A100_PODS_FIRST);
            var alone = new SchedulerDriver(cluster.client(), DeployedConfiguration.load(ProjectFiles.manifests()).scheduler()
                    .withExtenders(List.of()), HttpClient.newHttpClient(), 1).preempting(1, TieBreak.random(new Random(1)));
            urgentEvictsOnAndRunsOn(cluster, alone, "dgx1", "a100");
        }
    }

    @Test
    void aDisruptionBudgetOutranksTheNewestCards() throws Exception {
        // As in theUrgentPodsVictimsAreOnTheNewestCards, but the A100s' pods may not be disrupted: kube-scheduler's first
        // criterion is the fewest budgets broken, and hetgpu's verb keeps to it, so the DGX-1's pods go.
        try (var cluster = dgx1AndA100()) {
            var scheduler = scheduler(cluster);
            fill(cluster, scheduler, A100_PODS_FIRST);
            for (int i = 0; i < 4; i++) {
                cluster.client().pods().inNamespace(NS).withName("batch-" + i)
                        .edit(pod -> new PodBuilder(pod).editMetadata().addToLabels("budget", "guarded").endMetadata().build());
            }
            cluster.client().policy().v1().podDisruptionBudget().resource(new PodDisruptionBudgetBuilder().withNewMetadata()
                    .withName("guarded").withNamespace(NS).endMetadata().withNewSpec().withNewSelector().addToMatchLabels("budget", "guarded")
                    .endSelector().withMinAvailable(new IntOrString(4)).endSpec().withNewStatus().withDisruptionsAllowed(0).endStatus()
                    .build()).create();

            urgentEvictsOnAndRunsOn(cluster, scheduler, "dgx1", "a100");
        }
    }

    @Test
    void aPodThatNeverPreemptsEvictsNothing() throws Exception {
        try (var cluster = dgx1AndA100()) {
            var scheduler = scheduler(cluster);
            fill(cluster, scheduler, i -> Map.of());
            var pods = new TrainingPods(cluster.client());
            pods.submit("patient", 8, 1000, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"));
            cluster.client().pods().inNamespace(NS).withName("patient")
                    .edit(pod -> new PodBuilder(pod).editSpec().withPreemptionPolicy("Never").endSpec().build());

            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Unschedulable.class);
            assertThat(cluster.client().pods().inNamespace(NS).list().getItems()).filteredOn(pod -> pod.getMetadata().getName()
                    .startsWith("batch-")).hasSize(8).allSatisfy(pod -> assertThat(pod.getMetadata().getDeletionTimestamp()).isNull());
        }
    }

    @Test
    void aJobLosesNoPodToAPodOfItsOwnPriority() throws Exception {
        // Both servers held by one ps/worker job at priority 1000; another pod at 1000 waits rather than evict any of it.
        try (var cluster = dgx1AndA100()) {
            var scheduler = scheduler(cluster);
            var pods = new TrainingPods(cluster.client());
            for (int i = 0; i < 8; i++) {
                pods.submit("worker-" + i, 2, 1000, Map.of());
                cluster.client().pods().inNamespace(NS).withName("worker-" + i).edit(pod -> new PodBuilder(pod).editMetadata()
                        .addToLabels(HetgpuKeys.POD_JOB, "resnet").addToLabels(HetgpuKeys.POD_ROLE, "worker").endMetadata().build());
                assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
                pods.awaitRunning("worker-" + i);
            }
            pods.submit("same-priority", 2, 1000, Map.of());

            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Unschedulable.class);
            assertThat(cluster.client().pods().inNamespace(NS).list().getItems()).filteredOn(pod -> pod.getMetadata().getName()
                    .startsWith("worker-")).hasSize(8).allSatisfy(pod -> assertThat(pod.getMetadata().getDeletionTimestamp()).isNull());
        }
    }

    /** Batch pods 0-3 asking for A100s, the rest for V100s: fill() starts the A100s' pods first. */
    private static final IntFunction<Map<String, String>> A100_PODS_FIRST = i -> Map.of(HetgpuKeys.POD_GPU_MODELS, i < 4 ? "A100" : "V100");

    /** A DGX-1 (8 V100) and a DGX A100, both NVLink, in two racks. */
    private TestCluster dgx1AndA100() throws Exception {
        return TestCluster.start(List.of(NodeSpec.gpu("dgx1", "rack-a", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("a100", "rack-b", "zone-1", "dgx-a100")), dir, message -> { });
    }

    private static SchedulerDriver scheduler(TestCluster cluster) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var extender = cluster.startExtender(configuration.extender());
        return new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender),
                HttpClient.newHttpClient(), 1).preempting(1, TieBreak.random(new Random(1)));
    }

    /** Eight 2-GPU low-priority pods, one at a time, each running before the next: both servers full. */
    private static void fill(TestCluster cluster, SchedulerDriver scheduler, IntFunction<Map<String, String>> annotations) {
        var pods = new TrainingPods(cluster.client());
        for (int i = 0; i < 8; i++) {
            pods.submit("batch-" + i, 2, -100, annotations.apply(i));
            assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
            pods.awaitRunning("batch-" + i);
        }
    }

    private static void urgentEvictsOnAndRunsOn(TestCluster cluster, SchedulerDriver scheduler, String node, String untouched) {
        var pods = new TrainingPods(cluster.client());
        pods.submit("urgent", 8, 1000, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"));

        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Nominated.class, nominated -> {
            assertThat(nominated.node()).isEqualTo(node);
            assertThat(nominated.victims()).hasSize(4).allSatisfy(victim -> assertThat(victim).startsWith(NS + "/batch-"));
        });
        assertThat(cluster.client().pods().inNamespace(NS).list().getItems())
                .filteredOn(pod -> untouched.equals(pod.getSpec().getNodeName())).hasSize(4);

        // Once the kubelet has freed the victims' GPUs and the plugin has published them, the pod is bound there.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> scheduler.scheduleRound().stream()
                .anyMatch(decision -> decision instanceof Decision.Bound bound && bound.pod().equals(NS + "/urgent")));
        var urgent = pods.awaitRunning("urgent");
        assertThat(urgent.getSpec().getNodeName()).isEqualTo(node);
        assertThat(TrainingPods.devices(urgent)).hasSize(8);
    }
}
