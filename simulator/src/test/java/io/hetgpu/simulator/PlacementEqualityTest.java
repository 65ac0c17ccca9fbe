package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.EvictionFloor;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulator places pods as the whole system does: a few hundred pods flow through a small
 * heterogeneous cluster, once through the simulator's placers and once through the test cluster (API
 * server, simulated kubelets with the real device plugins over Unix sockets, the real extender over
 * HTTP as manifests/ configures it, the kube-scheduler-protocol driver), with the same creations and
 * deletions; every scheduling attempt must end alike: unschedulable, or the same node and the same GPUs. Its jobs of
 * several pods carry {@code hetgpu.io/job}: with hetgpu they are planned whole, by the extender's WholeJobs in the test
 * cluster and by the same planner in the simulator; kube-scheduler alone places them pod by pod on both sides.
 * Ties are broken by equally seeded random draws on both sides, so equal scores in equal order choose alike.
 */
class PlacementEqualityTest {

    private static final long SEED = 11;
    /**
     * The replay waits after every binding and deletion until each node's plugin has published its free devices; with
     * the test cluster's usual half second between reads, about half of this test's time went to that wait.
     */
    private static final Duration INVENTORY_INTERVAL = Duration.ofMillis(100);
    private static final List<String> RACKS = List.of("rack-a", "rack-b", "rack-c");

    /** In name order, the order the test cluster's scheduler walks nodes in, as the simulator walks its inventory. */
    private static final List<NodeSpec> NODES = List.of(
            NodeSpec.gpu("n1-v100", "rack-a", "zone-1", "dgx1-v100"),
            NodeSpec.gpu("n2-p100", "rack-a", "zone-1", "dgx1-p100"),
            NodeSpec.gpu("n3-k80", "rack-a", "zone-1", "k80-4x"),
            NodeSpec.cpu("n4-cpu", "rack-a", "zone-1"),
            NodeSpec.gpu("n5-a100", "rack-b", "zone-1", "dgx-a100"),
            NodeSpec.gpu("n6-k80", "rack-b", "zone-2", "k80-4x"),
            NodeSpec.gpu("n7-t4", "rack-b", "zone-2", "t4-4x"),
            NodeSpec.gpu("n8-mixed", "rack-c", "zone-2", "mixed"),
            NodeSpec.cpu("n9-cpu", "rack-c", "zone-2"));

    @TempDir
    Path dir;

    @Test
    void nodesAreInTheOrderBothSidesWalkThemIn() {
        assertThat(NODES).extracting(NodeSpec::name).isSorted();
    }

    @Test
    void hetgpuPlacesInTheSimulatorAsInTheTestCluster() throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        // Neither side preempts here (the placer without preemption, the driver without it), and the eviction floor the
        // shipped ConfigMap turns on concerns only a scheduler that does: the simulator leaves it out then, as its placer
        // says, so the extender runs without it too. The floor is the same PolicyStep on both sides.
        var extender = configuration.extender().withEvictionFloor(EvictionFloor.NONE);
        var policy = new PlacementPolicy(extender.policy());
        var inventory = TestClusterInventory.of(NODES, CardCatalog.defaults());
        var script = PlacementScript.play(inventory, new HetgpuPlacer("hetgpu", policy, false, ties()), RACKS, 180, true, true, SEED);

        var replayed = replay(script, cluster -> configuration.schedulerCalling(cluster.startExtender(extender)));

        assertSame(script, replayed, 200);
        // Its ps/worker jobs carry hetgpu.io/job: the extender's WholeJobs plans them whole in the test cluster, the
        // simulator through the same planner, and both place or refuse every member alike.
        System.out.printf("%d jobs of several pods placed whole, %d refused whole at least once%n", script.jobsPlacedWhole(),
                script.jobsRefusedWhole());
        assertThat(script.jobsPlacedWhole()).isGreaterThanOrEqualTo(15);
        assertThat(script.jobsRefusedWhole()).isPositive();
        // Reported, not asserted: pods whose GPUs are not of a card they accept (the device plugin does not
        // know the pod's requirements; see DeviceChoiceTest).
        var devices = inventory.nodes().stream().flatMap(node -> node.gpus().topology().devices().stream())
                .collect(java.util.stream.Collectors.toMap(device -> device.uuid(), device -> device));
        long misplaced = replayed.stream().filter(outcome -> outcome.devices().stream().map(devices::get)
                .anyMatch(device -> !KubernetesDefaultPlacer.accepts(script.pod(outcome.pod()).job(), device))).count();
        System.out.printf("%d pods got GPUs of a card they do not accept%n", misplaced);
        assertThat(configuration.scheduler().extenders()).singleElement()
                .satisfies(entry -> assertThat(entry.weight()).isEqualTo(KubeScore.EXTENDER_WEIGHT));
    }

    @Test
    void kubernetesAlonePlacesInTheSimulatorAsInTheTestCluster() throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var inventory = TestClusterInventory.of(NODES, CardCatalog.defaults());
        var script = PlacementScript.play(inventory, new KubernetesDefaultPlacer(ties()), RACKS, 70, false, false, SEED);
        var replayed = replay(script, cluster -> configuration.scheduler().withoutExtenders());

        assertSame(script, replayed, 80);
    }

    private static TieBreak ties() {
        return TieBreak.random(new Random(SEED));
    }

    private List<PlacementScript.Outcome> replay(PlacementScript script, Function<TestCluster, SchedulerSettings> scheduler)
            throws Exception {
        try (var cluster = TestCluster.start(NODES, dir, message -> { }, INVENTORY_INTERVAL)) {
            var replay = new TestClusterReplay(cluster, "hetgpu-scheduler", RACKS);
            var settings = scheduler.apply(cluster);
            var driver = new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), ties());
            return replay.replay(script.steps(), driver);
        }
    }

    private static void assertSame(PlacementScript script, List<PlacementScript.Outcome> replayed, int leastPlaced) {
        var simulated = script.outcomes();
        int first = 0;
        while (first < Math.min(simulated.size(), replayed.size()) && simulated.get(first).equals(replayed.get(first))) {
            first++;
        }
        var context = "first difference at attempt " + first + " of " + simulated.size() + ":\n  simulator:    "
                + (first < simulated.size() ? simulated.get(first) : "-") + "\n  test cluster: "
                + (first < replayed.size() ? replayed.get(first) : "-");
        assertThat(replayed).as(context).containsExactlyElementsOf(simulated);
        // The run is worth comparing: a few hundred pods placed, some of them waiting for room first.
        long placed = simulated.stream().filter(outcome -> !outcome.node().isEmpty()).count();
        assertThat(placed).isGreaterThanOrEqualTo(leastPlaced);
        assertThat(simulated.stream().filter(outcome -> outcome.node().isEmpty())).isNotEmpty();
        System.out.printf("%d attempts, %d pods placed, %d steps: simulator and test cluster agree%n", simulated.size(), placed,
                script.steps().size());
    }
}
