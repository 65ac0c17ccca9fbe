package io.hetgpu.extender.service;

import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.WireNode;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.gpu.MutableClock;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The service keeps assessments between calls; they must follow every change of the node or the pod. */
class ExtenderServiceTest {

    private final CardCatalog catalog = CardCatalog.defaults();
    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", catalog);
    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);
    private final ExtenderService service = new ExtenderService(ClusterView.REQUEST_ONLY, parser,
            new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), policy, (pod, table) -> { });
    private final io.hetgpu.gpu.NodeTopology dgx = TestTopologies.dgx1V100("dgx");

    @Test
    void aNewFreeListChangesTheAnswerForTheSamePod() {
        var pod = KubeJson.trainingPod();
        assertThat(filter(pod, node("1", TestTopologies.allFree(dgx))).nodes()).hasSize(1);
        assertThat(filter(pod, node("1", TestTopologies.allFree(dgx))).nodes()).hasSize(1);

        var busy = filter(pod, node("2", TestTopologies.free(dgx, 7)));
        assertThat(busy.nodes()).isEmpty();
        assertThat(busy.failedNodes()).containsEntry("dgx", "1 free V100, pod needs 4");
    }

    @Test
    void aPodOfAnotherShapeIsJudgedAfresh() {
        var node = node("1", TestTopologies.free(dgx, 0, 1));
        var small = KubeJson.trainingPod();
        small.getSpec().getContainers().getFirst().getResources().getLimits().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2"));
        small.getSpec().getContainers().getFirst().getResources().getRequests().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2"));
        assertThat(filter(small, node).nodes()).hasSize(1);
        assertThat(filter(KubeJson.trainingPod(), node).nodes()).isEmpty();
        assertThat(filter(small, node).nodes()).hasSize(1);
    }

    @Test
    void podsOfOneShapeButAnotherWorkloadAreJudgedAfresh() {
        // Gavel's single-GPU speeds: ResNet-50 crawls on a K80 (10 % of its V100 speed), Recommendation runs fastest there.
        var throughputs = new WorkloadThroughputs(Map.of(
                "resnet50", Map.of("K80", 1.81, "V100", 17.99), "recommendation", Map.of("K80", 20.05, "V100", 13.28)));
        var workloadAware = new ExtenderService(ClusterView.REQUEST_ONLY, parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(throughputs.withMinimumShare(0.25))), (pod, table) -> { });
        var k80 = TestTopologies.k80x4("k80");
        var node = new WireNode(new NodeFacts("k80", "1", Map.of(), TestTopologies.inventory(k80), TestTopologies.allFree(k80)),
                new byte[] {'{', '}'}, 0, 2);

        var resnet = workloadAware.filter(new ExtenderArgs(withWorkload("resnet50"), List.of(node), null));
        var recommendation = workloadAware.filter(new ExtenderArgs(withWorkload("recommendation"), List.of(node), null));

        assertThat(resnet.nodes()).isEmpty();
        assertThat(resnet.failedAndUnresolvableNodes()).containsOnlyKeys("k80");
        assertThat(recommendation.nodes()).as("the same node and pod shape, another workload class").hasSize(1);
    }

    private static Pod withWorkload(String workload) {
        var pod = KubeJson.trainingPod();
        // Four GPUs of any kind: only the workload class tells the pods apart.
        pod.getMetadata().getAnnotations().keySet().removeIf(key -> key.startsWith("hetgpu.io/"));
        pod.getMetadata().getAnnotations().put("hetgpu.io/workload", workload);
        return pod;
    }

    @Test
    void aPodBoundToAnUnchangedNodeChangesTheAnswerForNodeNames() {
        // The same facts object throughout, as an informer hands out while the node is unchanged: only the
        // pods bound to it change, and the kept state must not outlive them.
        var facts = new NodeFacts("dgx", "1", Map.of(), TestTopologies.inventory(dgx), TestTopologies.allFree(dgx));
        var bound = new java.util.concurrent.atomic.AtomicReference<List<BoundPod>>(List.of());
        var cluster = new SnapshotClusterView(() -> NodeSnapshot.of(List.of(facts), Map.of("dgx", bound.get())));
        var withCluster = new ExtenderService(cluster, parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                policy, (pod, table) -> { });
        var args = new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx"));

        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
        bound.set(List.of(new BoundPod("uid-1", 6, false, TestTopologies.READ_AT.plusSeconds(60))));
        assertThat(withCluster.filter(args).failedNodes()).containsEntry("dgx", "2 free V100, pod needs 4");
        bound.set(List.of());
        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
    }

    @Test
    void aBindInFlightHoldsItsDevicesForNodeNamesOnlyWhileItsRecordIsFresh() {
        // The same facts and pods throughout: nothing but time tells the record has outlived every bind that wrote it.
        var facts = new NodeFacts("dgx", "1", Map.of(), TestTopologies.inventory(dgx), TestTopologies.allFree(dgx));
        var clock = new MutableClock(TestTopologies.READ_AT.plusSeconds(60));
        var lifetime = java.time.Duration.ofSeconds(30);
        var inFlight = List.of(BoundPod.binding("their-uid", 6, List.of(0, 1, 2, 3, 4, 5).stream().map(p -> dgx.device(p).uuid()).toList(),
                clock.instant(), 0));
        var snapshot = NodeSnapshot.of(List.of(facts), Map.of("dgx", inFlight));
        var withCluster = new ExtenderService(new SnapshotClusterView(() -> snapshot), parser,
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack", "nvidia.com/gpu", lifetime, clock), policy, (pod, table) -> { });
        var args = new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx"));

        assertThat(withCluster.filter(args).failedNodes()).containsEntry("dgx", "2 free V100, pod needs 4");
        assertThat(withCluster.filter(args).failedNodes()).as("asked again, the record still fresh").containsEntry("dgx", "2 free V100, pod needs 4");
        clock.advance(lifetime.plusSeconds(1));
        assertThat(withCluster.filter(args).nodeNames()).as("the record stale").containsExactly("dgx");
    }

    @Test
    void aRemovedNodeIsForgottenAndTheNodeMovedIntoItsPlaceIsJudgedAsItself() {
        var a = dgxFacts("dgx-a", TestTopologies.allFree(TestTopologies.dgx1V100("dgx-a")));
        var b = dgxFacts("dgx-b", TestTopologies.free(TestTopologies.dgx1V100("dgx-b"), 7));
        var c = dgxFacts("dgx-c", TestTopologies.free(TestTopologies.dgx1V100("dgx-c"), 0, 1));
        var nodes = new AtomicReference<>(NodeSnapshot.of(List.of(a, b, c), Map.of()));
        var nodeStates = new NodeStateFactory(catalog, "topology.hetgpu.io/rack");
        var withCluster = new ExtenderService(viewOf(nodes), parser, nodeStates, policy, (pod, table) -> { });
        var all = new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx-a", "dgx-b", "dgx-c"));

        var first = withCluster.filter(all);
        assertThat(first.nodeNames()).containsExactly("dgx-a");
        assertThat(first.failedNodes()).containsOnlyKeys("dgx-b", "dgx-c");
        assertThat(nodeStates.cachedNodes()).isEqualTo(3);

        // dgx-c takes dgx-a's position: what was kept for that position must not answer for it.
        nodes.set(nodes.get().withoutNode("dgx-a"));
        var second = withCluster.filter(all);

        assertThat(second.nodeNames()).isEmpty();
        assertThat(second.failedNodes()).containsExactlyEntriesOf(orderedMap(
                "dgx-b", "1 free V100, pod needs 4", "dgx-c", "2 free V100, pod needs 4", "dgx-a", ExtenderService.UNKNOWN_NODE));
        assertThat(nodeStates.cachedNodes()).isEqualTo(2);
    }

    @Test
    void answersFollowTheSnapshotWhileNodesChangeUnderneath() throws Exception {
        var dgxA = TestTopologies.dgx1V100("dgx-a");
        var idle = NodeSnapshot.of(List.of(dgxFacts("dgx-a", TestTopologies.allFree(dgxA)), dgxFacts("cpu", null)), Map.of());
        var nodes = new AtomicReference<>(idle);
        var withCluster = new ExtenderService(viewOf(nodes), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                policy, (pod, table) -> { });
        var args = new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx-a", "cpu"));
        var done = new java.util.concurrent.atomic.AtomicBoolean();
        // The free list changes (new facts object each time), the node is removed and added again, while requests run.
        var changer = Thread.ofPlatform().start(() -> {
            for (int round = 0; !done.get(); round++) {
                var snapshot = nodes.get();
                nodes.set(switch (round % 3) {
                    case 0 -> snapshot.withNode(dgxFacts("dgx-a", TestTopologies.free(dgxA, 7)));
                    case 1 -> snapshot.withoutNode("dgx-a");
                    default -> snapshot.withNode(dgxFacts("dgx-a", TestTopologies.allFree(dgxA)));
                });
            }
        });
        try {
            for (int request = 0; request < 2_000; request++) {
                var result = withCluster.filter(args);
                assertThat(result.error()).isEmpty();
                assertThat(result.failedAndUnresolvableNodes()).containsOnlyKeys("cpu");
                if (result.nodeNames().isEmpty()) {
                    assertThat(result.failedNodes().get("dgx-a")).isIn("1 free V100, pod needs 4", ExtenderService.UNKNOWN_NODE);
                } else {
                    assertThat(result.nodeNames()).containsExactly("dgx-a");
                    assertThat(result.failedNodes()).isEmpty();
                }
            }
        } finally {
            done.set(true);
            changer.join();
        }
        nodes.set(idle);
        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx-a");
    }

    @Test
    void aReserveCountsTheWholeClustersTopTierNotJustTheNodesAsked() {
        var a = dgxFacts("dgx-a", TestTopologies.allFree(TestTopologies.dgx1V100("dgx-a")));
        var idle = dgxFacts("dgx-b", TestTopologies.allFree(TestTopologies.dgx1V100("dgx-b")));
        var nodes = new AtomicReference<>(NodeSnapshot.of(List.of(a, idle), Map.of()));
        var reserving = new ExtenderService(viewOf(nodes), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS.withReserve(new HighPriorityReserve(8))), (pod, table) -> { });
        var metrics = new ExtenderMetrics();
        metrics.watchReserve(reserving);
        var ordinary = KubeJson.trainingPod();
        ordinary.getSpec().setPriority(0);
        var args = new ExtenderArgs(ordinary, null, List.of("dgx-a"));

        assertThat(reserving.filter(args).nodeNames()).as("16 V100 free, 12 left after this pod").containsExactly("dgx-a");

        // dgx-b, which the request does not name, fills up; dgx-a itself is unchanged.
        nodes.set(nodes.get().withNode(dgxFacts("dgx-b", TestTopologies.free(TestTopologies.dgx1V100("dgx-b")))));
        var refused = reserving.filter(args);
        assertThat(refused.nodeNames()).isEmpty();
        assertThat(refused.failedNodes()).containsExactly(
                Map.entry("dgx-a", "the cluster's last 8 free V100 are kept for high-priority pods (8 free now)"));
        assertThat(metrics.scrape()).contains("hetgpu_extender_top_tier_free_gpus 8.0", "hetgpu_extender_reserve_held_total 1.0");

        var urgent = KubeJson.trainingPod();
        urgent.getSpec().setPriority(1000);
        assertThat(reserving.filter(new ExtenderArgs(urgent, null, List.of("dgx-a"))).nodeNames()).containsExactly("dgx-a");
    }

    @Test
    void aNodeNamedTwiceIsRefusedOnce() {
        var b = dgxFacts("dgx-b", TestTopologies.free(TestTopologies.dgx1V100("dgx-b"), 7));
        var cpu = dgxFacts("cpu", null);
        var withCluster = new ExtenderService(viewOf(new AtomicReference<>(NodeSnapshot.of(List.of(b, cpu), Map.of()))),
                parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), policy, (pod, table) -> { });

        var result = withCluster.filter(new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx-b", "cpu", "dgx-b", "ghost", "ghost", "cpu")));

        assertThat(result.failedNodes()).containsExactlyEntriesOf(orderedMap(
                "dgx-b", "1 free V100, pod needs 4", "ghost", ExtenderService.UNKNOWN_NODE));
        assertThat(result.failedAndUnresolvableNodes()).containsOnlyKeys("cpu").hasSize(1);
    }

    private static NodeFacts dgxFacts(String name, String free) {
        var inventory = free == null ? null : TestTopologies.inventory(TestTopologies.dgx1V100(name));
        return new NodeFacts(name, "", Map.of(), inventory, free);
    }

    private static Map<String, String> orderedMap(String... keysAndValues) {
        var map = new java.util.LinkedHashMap<String, String>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    /** A synced cluster whose nodes are whatever snapshot the test last set. */
    private static ClusterView viewOf(AtomicReference<NodeSnapshot> nodes) {
        return new SnapshotClusterView(nodes::get);
    }

    private FilterResult filter(Pod pod, WireNode node) {
        return service.filter(new ExtenderArgs(pod, List.of(node), null));
    }

    private WireNode node(String resourceVersion, String free) {
        var facts = new NodeFacts("dgx", resourceVersion, Map.of(), TestTopologies.inventory(dgx), free);
        return new WireNode(facts, new byte[] {'{', '}'}, 0, 2);
    }
}
