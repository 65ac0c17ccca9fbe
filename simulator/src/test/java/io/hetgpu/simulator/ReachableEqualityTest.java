package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.hetgpu.extender.ExtenderSetup;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.FreeDevices;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What preemption could free for an urgent pod is counted twice: by the simulator ({@link ClusterState#reachableBy}, from
 * the GPUs each priority holds) and by the extender ({@link ExtenderService#reachableBy}, from the Nodes and Pods its
 * informers list: inventories, free lists, signed device records, {@code spec.priority}). The eviction floor
 * ({@code evictForFasterCards}, shipped at 0.9) closes tiers from it on both sides, so the simulator's figures stand for
 * the extender's only if the two count the same nodes with the same GPUs free. Checked here with preemption on, as
 * the shipped configuration has it, on clusters of mixed tiers filled by pods of several priorities (some nodes full,
 * some empty, some pods bound after their node's free list was read), for pods of 1, 2, 4 and 8 GPUs.
 *
 * <p>The simulator knows no PodDisruptionBudgets: the equality holds without budgets. With budgets the extender counts a
 * guarded pod's GPUs as held, so its reachable GPUs are a subset of the simulator's, node by node.
 */
class ReachableEqualityTest {

    private static final long SEED = 21;
    /** The priorities of the pods bound: below, at and above the shipped thresholds (high 1000, low -1). */
    private static final int[] BOUND_PRIORITIES = {-100, 0, 500, 1000, 2000};
    /** Preemptors' priorities: each bound one, one above it, and one above them all. */
    private static final int[] PREEMPTOR_PRIORITIES = {-100, 0, 1, 500, 501, 1000, 1001, 2000, 2001, 1_000_000};
    /** The urgent pods the floor concerns: at or above the shipped high threshold. */
    private static final int[] URGENT_PRIORITIES = {1000, 1001, 2001};
    private static final int[] SIZES = {1, 2, 4, 8};

    private static final List<List<NodeSpec>> CLUSTERS = List.of(
            // The placement-equality test's cluster: every tier, a mixed node, CPU nodes.
            List.of(NodeSpec.gpu("n1-v100", "rack-a", "zone-1", "dgx1-v100"),
                    NodeSpec.gpu("n2-p100", "rack-a", "zone-1", "dgx1-p100"),
                    NodeSpec.gpu("n3-k80", "rack-a", "zone-1", "k80-4x"),
                    NodeSpec.cpu("n4-cpu", "rack-a", "zone-1"),
                    NodeSpec.gpu("n5-a100", "rack-b", "zone-1", "dgx-a100"),
                    NodeSpec.gpu("n6-k80", "rack-b", "zone-2", "k80-4x"),
                    NodeSpec.gpu("n7-t4", "rack-b", "zone-2", "t4-4x"),
                    NodeSpec.gpu("n8-mixed", "rack-c", "zone-2", "mixed"),
                    NodeSpec.cpu("n9-cpu", "rack-c", "zone-2")),
            // Few new cards among many old ones: what the floor is for.
            List.of(NodeSpec.gpu("a-h100", "rack-a", "zone-1", "dgx-h100"),
                    NodeSpec.gpu("b-a100", "rack-a", "zone-1", "dgx-a100"),
                    NodeSpec.gpu("c-v100", "rack-b", "zone-1", "v100-pcie-8x"),
                    NodeSpec.gpu("d-v100", "rack-b", "zone-1", "dgx2-v100"),
                    NodeSpec.gpu("e-p100", "rack-b", "zone-2", "dgx1-p100"),
                    NodeSpec.gpu("f-k80", "rack-c", "zone-2", "k80-4x"),
                    NodeSpec.gpu("g-k80", "rack-c", "zone-2", "k80-4x"),
                    NodeSpec.gpu("h-t4", "rack-c", "zone-2", "t4-4x")),
            // Two tiers only, eight GPUs a node: 8-GPU pods fill whole nodes.
            List.of(NodeSpec.gpu("p1", "rack-a", "", "dgx1-v100"),
                    NodeSpec.gpu("p2", "rack-a", "", "dgx1-v100"),
                    NodeSpec.gpu("p3", "rack-b", "", "dgx1-p100"),
                    NodeSpec.gpu("p4", "rack-b", "", "dgx1-p100"),
                    NodeSpec.gpu("p5", "rack-b", "", "dgx1-p100")));

    private int fills;

    /** One pod the filling bound, as both sides hold it. */
    private record Bound(String uid, int node, long mask, int priority, Instant boundAt, boolean guarded) {
    }

    /** One cluster filled, seen by both sides. */
    private record Filled(ClusterState simulator, ExtenderService extender, HetgpuPlacer placer) {
    }

    /** A node as reachable, compared by what the policy reads of it: where it stands and which devices are free. */
    private record Reach(String name, String rack, String zone, Set<String> free) {
        static Reach of(NodeState state) {
            var free = new TreeSet<String>();
            var devices = state.gpus().topology().devices();
            for (int i = 0; i < devices.size(); i++) {
                if ((state.freeMask() & 1L << i) != 0) {
                    free.add(devices.get(i).uuid());
                }
            }
            return new Reach(state.name(), state.rack(), state.zone(), free);
        }
    }

    @Test
    void theSimulatorAndTheExtenderReachTheSameGpusForEveryPreemptorWithoutBudgets() throws Exception {
        var setup = ExtenderSetup.of(DeployedConfiguration.load(ProjectFiles.manifests()).extender());
        assertThat(setup.policy().floorsEvictions()).as("the shipped configuration floors evictions").isTrue();
        var random = new Random(SEED);
        int compared = 0;
        int closedSomewhere = 0;
        int reachedMoreThanFree = 0;
        var closings = new HashSet<ClosedTier>();
        for (var specs : CLUSTERS) {
            for (int fill = 0; fill < 3; fill++) {
                var filled = fill(setup, specs, random, false);
                for (int priority : PREEMPTOR_PRIORITIES) {
                    var simulated = filled.simulator().reachableBy(priority).stream().map(Reach::of).toList();
                    var extended = filled.extender().reachableBy(priority).stream().map(Reach::of).toList();
                    assertThat(extended).as("cluster %s, fill %d, preemptor priority %d", names(specs), fill, priority)
                            .containsExactlyElementsOf(simulated);
                    compared++;
                    if (freeCount(simulated) > filled.simulator().freeGpus()) {
                        reachedMoreThanFree++;
                    }
                }
                for (int priority : URGENT_PRIORITIES) {
                    for (int gpus : SIZES) {
                        var request = HetgpuPlacer.request(urgent(gpus, priority), 0, false);
                        var simulated = filled.placer().closedTier(request, filled.simulator());
                        assertThat(filled.extender().closedTier(request))
                                .as("cluster %s, fill %d, %d GPUs at priority %d", names(specs), fill, gpus, priority).isEqualTo(simulated);
                        if (simulated != ClosedTier.NONE) {
                            closedSomewhere++;
                        }
                        closings.add(simulated);
                    }
                }
            }
        }
        // Worth comparing: preemption reaches beyond the free GPUs, and the floor closes tiers to urgent pods, not always the same.
        System.out.printf("%d reachable sets equal (%d beyond the free GPUs), %d urgent pods with tiers closed alike, %d distinct closings%n",
                compared, reachedMoreThanFree, closedSomewhere, closings.size());
        assertThat(reachedMoreThanFree).isPositive();
        assertThat(closedSomewhere).isPositive();
        assertThat(closings).as("the floor closes different tiers as the clusters fill").hasSizeGreaterThan(1);
    }

    @Test
    void withBudgetsTheExtenderReachesASubsetOfWhatTheSimulatorReaches() throws Exception {
        var setup = ExtenderSetup.of(DeployedConfiguration.load(ProjectFiles.manifests()).extender());
        var random = new Random(SEED + 1);
        int smaller = 0;
        for (var specs : CLUSTERS) {
            var filled = fill(setup, specs, random, true);
            for (int priority : PREEMPTOR_PRIORITIES) {
                var simulated = filled.simulator().reachableBy(priority).stream().map(Reach::of).toList();
                var extended = filled.extender().reachableBy(priority).stream().map(Reach::of).toList();
                assertThat(extended).extracting(Reach::name).containsExactlyElementsOf(simulated.stream().map(Reach::name).toList());
                for (int i = 0; i < extended.size(); i++) {
                    assertThat(simulated.get(i).free()).as("node %s, preemptor priority %d", simulated.get(i).name(), priority)
                            .containsAll(extended.get(i).free());
                }
                if (freeCount(extended) < freeCount(simulated)) {
                    smaller++;
                }
            }
        }
        // The budgets guard something: a subset that is always the whole would not tell them apart.
        assertThat(smaller).isPositive();
    }

    /**
     * Binds pods of random sizes and of {@link #BOUND_PRIORITIES} to the nodes, each node filled to a share drawn from
     * none, half and all of its GPUs, with the device plugin's choice of devices; a few pods are bound after their
     * node's free list was read (it still shows their GPUs free; their records say otherwise). With {@code budgets},
     * half the pods carry the label of a PodDisruptionBudget that allows no disruption.
     */
    private Filled fill(ExtenderSetup setup, List<NodeSpec> specs, Random random, boolean budgets) {
        // Each filling is a new version of every Node: the extender's node states are kept per resourceVersion.
        var version = Integer.toString(++fills);
        var inventory = TestClusterInventory.of(specs, setup.catalog());
        var cluster = new ClusterState(inventory);
        var readAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(600);
        var pods = new ArrayList<Bound>();
        var after = new HashSet<String>();
        for (int node = 0; node < inventory.nodes().size(); node++) {
            int healthy = Long.bitCount(inventory.nodes().get(node).gpus().healthyMask());
            int target = healthy * random.nextInt(3) / 2;
            for (int attempt = 0; attempt < 64 && healthy - Long.bitCount(cluster.free(node)) < target; attempt++) {
                int gpus = SIZES[random.nextInt(SIZES.length)];
                if (Long.bitCount(cluster.free(node)) < gpus || healthy - Long.bitCount(cluster.free(node)) + gpus > target) {
                    continue;
                }
                int priority = BOUND_PRIORITIES[random.nextInt(BOUND_PRIORITIES.length)];
                long mask = new Placer.PodPlacement(node, cluster.deviceGrant(node, gpus)).mask();
                cluster.take(node, mask, priority);
                var uid = "pod-" + node + "-" + attempt;
                boolean late = random.nextInt(5) == 0;
                if (late) {
                    after.add(uid);
                }
                pods.add(new Bound(uid, node, mask, priority, late ? readAt.plusSeconds(1 + attempt) : readAt.minusSeconds(100 - attempt),
                        budgets && random.nextBoolean()));
            }
        }
        var nodes = new ArrayList<Node>();
        for (int node = 0; node < inventory.nodes().size(); node++) {
            long shownFree = cluster.free(node);
            for (var pod : pods) {
                if (pod.node() == node && after.contains(pod.uid())) {
                    shownFree |= pod.mask();
                }
            }
            nodes.add(node(setup, inventory.nodes().get(node), shownFree, readAt, version));
        }
        var listed = pods.stream().map(pod -> pod(setup, inventory, pod)).toList();
        var view = new ListedClusterView(nodes, listed, List.of(), List.of(), setup.parser(), setup.config().rackLabel(), setup.trust());
        if (budgets) {
            view.useBudgets(List.of(guardingAll()));
        }
        var extender = new ExtenderService(view, setup.parser(), setup.nodeStates(), setup.policy(), (pod, table) -> { });
        return new Filled(cluster, extender, new HetgpuPlacer("hetgpu", setup.policy(), false, SEED));
    }

    /** The Node as hetgpu's device plugin publishes it: its inventory, and its free devices as read at {@code readAt}. */
    private static Node node(ExtenderSetup setup, SimNode sim, long free, Instant readAt, String version) {
        var labels = Map.of(setup.config().rackLabel(), sim.rack(), HetgpuKeys.LABEL_ZONE, sim.zone());
        var builder = new NodeBuilder().withNewMetadata().withName(sim.name()).withResourceVersion(version).withLabels(labels).endMetadata();
        if (sim.gpus().size() > 0) {
            var topology = sim.gpus().topology();
            builder.editMetadata().withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, new InventoryCodec().encode(topology),
                    HetgpuKeys.ANNOTATION_FREE, new FreeDevicesCodec().encode(new FreeDevices(uuids(sim, free), readAt)))).endMetadata()
                    .withNewStatus().withAllocatable(Map.of(setup.config().resourceName(),
                            new Quantity(Integer.toString(Long.bitCount(sim.gpus().healthyMask()))))).endStatus();
        }
        return builder.build();
    }

    /** The pod as the API server holds it once hetgpu's bind verb has bound it: running, with its signed device record. */
    private static Pod pod(ExtenderSetup setup, ClusterInventory inventory, Bound bound) {
        var sim = inventory.nodes().get(bound.node());
        var devices = List.copyOf(uuids(sim, bound.mask()));
        var record = setup.trust().sign(new DeviceAssignment(sim.name(), devices, bound.boundAt()), bound.uid());
        var gpus = new Quantity(Integer.toString(devices.size()));
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(bound.uid()).withUid(bound.uid())
                .withLabels(bound.guarded() ? Map.of("budget", "guarded") : Map.of("app", "batch"))
                .withAnnotations(Map.of(HetgpuKeys.POD_GPU_DEVICES, new DeviceAssignmentCodec().encode(record))).endMetadata()
                .withNewSpec().withNodeName(sim.name()).withSchedulerName("hetgpu-scheduler").withPriority(bound.priority())
                .addNewContainer().withName("train").withNewResources().withRequests(Map.of(setup.config().resourceName(), gpus))
                .withLimits(Map.of(setup.config().resourceName(), gpus)).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Running").withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("True")
                        .withLastTransitionTime(bound.boundAt().toString()).build()).endStatus()
                .build();
    }

    /** A budget over the guarded pods that allows no disruption. */
    private static PodDisruptionBudget guardingAll() {
        return new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace("ml").withName("guarded").endMetadata()
                .withNewSpec().withNewSelector().withMatchLabels(Map.of("budget", "guarded")).endSelector().endSpec()
                .withNewStatus().withDisruptionsAllowed(0).endStatus().build();
    }

    private static Set<String> uuids(SimNode sim, long mask) {
        var uuids = new TreeSet<String>();
        var devices = sim.gpus().topology().devices();
        for (int i = 0; i < devices.size(); i++) {
            if ((mask & 1L << i) != 0) {
                uuids.add(devices.get(i).uuid());
            }
        }
        return uuids;
    }

    private static Job urgent(int gpus, int priority) {
        return new Job(1, 0, true, priority, "", List.of(new Job.Pod(gpus, "")), 3600, Set.of(), 0, 0, "");
    }

    private static int freeCount(List<Reach> reach) {
        return reach.stream().mapToInt(node -> node.free().size()).sum();
    }

    private static List<String> names(List<NodeSpec> specs) {
        return specs.stream().map(NodeSpec::name).toList();
    }
}
