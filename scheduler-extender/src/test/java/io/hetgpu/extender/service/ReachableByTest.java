package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ForwardingClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.LabelSelection;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What preemption could free for an urgent pod, as the eviction floor counts it: a pod a PodDisruptionBudget guards keeps
 * its GPUs, so the floor does not close the cards of unguarded pods in favour of guarded ones kube-scheduler would not
 * evict first.
 */
class ReachableByTest {

    private static final NodeStateFactory NODES = new NodeStateFactory(CardCatalog.defaults(), "rack");
    private final Map<String, DisruptionBudgets.PodLabels> labels = new HashMap<>();

    /** A DGX-1 and a DGX A100, each held whole by four 2-GPU pods at priority 0; the A100's pods labelled {@code budget: guarded}. */
    private NodeSnapshot twoFullServers() {
        var v100 = TestTopologies.dgx1V100("dgx1");
        var a100 = TestTopologies.dgxA100("a100");
        var at = TestTopologies.READ_AT;
        var held = new HashMap<String, List<BoundPod>>();
        for (var node : List.of("dgx1", "a100")) {
            var pods = new ArrayList<BoundPod>();
            for (int i = 0; i < 4; i++) {
                var uid = node + "-" + i;
                pods.add(new BoundPod(uid, 2, true, at.minusSeconds(40 - i), List.of(), 0));
                labels.put(uid, new DisruptionBudgets.PodLabels("ml", uid, node.equals("a100") ? Map.of("budget", "guarded") : Map.of("app", "batch")));
            }
            held.put(node, pods);
        }
        return NodeSnapshot.of(List.of(new NodeFacts("dgx1", "1", Map.of(), TestTopologies.inventory(v100), TestTopologies.free(v100)),
                new NodeFacts("a100", "1", Map.of(), TestTopologies.inventory(a100), TestTopologies.free(a100))), held);
    }

    private ClusterView withBudgets(NodeSnapshot snapshot, DisruptionBudgets budgets) {
        return new ForwardingClusterView(new SnapshotClusterView(() -> snapshot)) {
            @Override
            public DisruptionBudgets budgets() {
                return budgets;
            }

            @Override
            public DisruptionBudgets.PodLabels budgetLabelsOf(String uid) {
                return labels.get(uid);
            }
        };
    }

    private static Map<String, Integer> freeByNode(List<NodeState> states) {
        var free = new HashMap<String, Integer>();
        states.forEach(state -> free.put(state.name(), state.freeCount()));
        return free;
    }

    private static DisruptionBudgets guarding(int allowed) {
        return DisruptionBudgets.of(List.of(new DisruptionBudgets.Budget("ml", new LabelSelection(Map.of("budget", "guarded"), List.of()),
                allowed, Set.of())));
    }

    @Test
    void guardedPodsKeepTheirGpusAndUnguardedOnesCountFree() {
        var snapshot = twoFullServers();

        assertThat(freeByNode(NodeResolution.reachableBy(snapshot, NODES, 1000, withBudgets(snapshot, DisruptionBudgets.NONE))))
                .containsEntry("dgx1", 8).containsEntry("a100", 8);
        assertThat(freeByNode(NodeResolution.reachableBy(snapshot, NODES, 1000, withBudgets(snapshot, guarding(0)))))
                .containsEntry("dgx1", 8).containsEntry("a100", 0);
        // One disruption allowed: one pod's pair may go on the A100 node.
        assertThat(freeByNode(NodeResolution.reachableBy(snapshot, NODES, 1000, withBudgets(snapshot, guarding(1)))))
                .containsEntry("dgx1", 8).containsEntry("a100", 2);
    }

    @Test
    void beforeTheBudgetsAreReadOnlyTheGpusFreeNowCount() {
        var snapshot = twoFullServers();

        assertThat(freeByNode(NodeResolution.reachableBy(snapshot, NODES, 1000, withBudgets(snapshot, DisruptionBudgets.UNKNOWN))))
                .containsEntry("dgx1", 0).containsEntry("a100", 0);
    }

    @Test
    void podsAtOrAboveThePreemptorsPriorityNeverCount() {
        var snapshot = twoFullServers();

        assertThat(freeByNode(NodeResolution.reachableBy(snapshot, NODES, 0, withBudgets(snapshot, DisruptionBudgets.NONE))))
                .containsEntry("dgx1", 0).containsEntry("a100", 0);
    }
}
