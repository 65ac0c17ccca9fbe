package io.hetgpu.testcluster.explain;

import io.hetgpu.extender.ExtenderSetup;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What would have to change for a pod no node takes now, in GPUs of the class it asks for: whether any node has that
 * many such cards at all, and else how many would have to be free on which node. The cards counted are the extender's
 * own ({@code PlacementPolicy.eligibleMask}: the same device filters, over the same free devices), so the count is the
 * one its reasons give node by node, said once for the cluster.
 */
final class Shortfall {

    /** How many nodes a line names before "…". */
    private static final int NAMED = 4;

    private Shortfall() {
    }

    /** One node's cards of the pod's class: how many it has, how many are free now. */
    private record Cards(String node, int eligible, int free) {
    }

    static List<String> of(PodRequest pod, ExtenderSetup setup, ClusterView view) {
        if (!pod.needsGpus()) {
            return List.of();
        }
        var snapshot = view.nodes();
        var nodes = new ArrayList<Cards>();
        for (int i = 0; i < snapshot.size(); i++) {
            NodeState state = setup.nodeStates().state(snapshot.facts(i), snapshot.boundPods(i));
            long eligible = setup.policy().eligibleMask(pod, state);
            nodes.add(new Cards(state.name(), Long.bitCount(eligible), Long.bitCount(eligible & state.freeMask())));
        }
        var cardClass = setup.policy().cardClass(pod);
        var what = pod.gpuCount() + " " + (cardClass.isEmpty() ? "" : cardClass + " ") + (pod.gpuCount() == 1 ? "GPU" : "GPUs")
                + (pod.requireNvlink() && pod.gpuCount() > 1 ? " joined by NVLink" : "");
        int most = nodes.stream().mapToInt(Cards::eligible).max().orElse(0);
        if (most < pod.gpuCount()) {
            var largest = nodes.stream().filter(node -> node.eligible() == most && most > 0).map(Cards::node).sorted().toList();
            return List.of(most == 0
                    ? "no node has " + what + " at all: no node has any such GPU; the pod must ask for another class of card, or the "
                            + "cluster needs a node with such cards"
                    : "no node has " + what + " at all: the most on one node is " + most + " (" + named(largest) + "); the pod must ask for "
                            + most + " or fewer, or another class of card, or the cluster needs a node with " + pod.gpuCount());
        }
        var able = nodes.stream().filter(node -> node.eligible() >= pod.gpuCount())
                .sorted(Comparator.comparingInt((Cards node) -> -node.free()).thenComparing(Cards::node)).toList();
        int lacking = pod.gpuCount() - able.getFirst().free();
        var lines = new ArrayList<String>();
        if (lacking > 0) {
            lines.add("it needs " + what + " free on one node; " + able.size() + (able.size() == 1 ? " node has" : " nodes have")
                    + " that many, " + String.join(", ", able.stream().limit(NAMED).map(node -> node.node() + " with " + node.free() + " of "
                    + node.eligible() + " free").toList()) + (able.size() > NAMED ? ", …" : "") + ": " + lacking + " more must be free on "
                    + able.getFirst().node() + (able.size() > 1 ? " or as many on another" : "")
                    + " (pods there ending, or evicted by preemption for a pod of higher priority)");
        } else {
            lines.add(able.getFirst().node() + " has " + able.getFirst().free() + " such GPUs free: what stands in the way there is in "
                    + "the reasons above");
        }
        return lines;
    }

    private static String named(List<String> nodes) {
        return String.join(", ", nodes.stream().limit(NAMED).toList()) + (nodes.size() > NAMED ? ", …" : "");
    }
}
