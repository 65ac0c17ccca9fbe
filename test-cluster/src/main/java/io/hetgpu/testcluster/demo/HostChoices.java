package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.DefaultScore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Follows a scheduling round decision by decision and keeps, per pod scored over several nodes, its
 * {@link HostChoice}: kube-scheduler's own scores as they stood when the pod was scheduled (the pods
 * bound before it counted), so the extender's share of each total can be told apart.
 */
final class HostChoices {

    private final Map<String, Node> nodes = new HashMap<>();
    private final Map<String, Pod> pods = new HashMap<>();
    private final Map<String, List<Pod>> bound = new HashMap<>();
    private final long weight;
    private final Map<String, HostChoice> choices = new LinkedHashMap<>();

    /** @param weight the extender's weight; 0 without an extender, when there is nothing to tell apart */
    HostChoices(List<Node> nodes, List<Pod> pods, long weight) {
        nodes.forEach(node -> this.nodes.put(node.getMetadata().getName(), node));
        pods.forEach(pod -> this.pods.put(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(), pod));
        this.weight = weight;
    }

    void record(Decision decision) {
        if (!(decision instanceof Decision.Bound b)) {
            return;
        }
        var pod = pods.get(b.pod());
        if (pod == null) {
            return;
        }
        if (weight > 0 && b.totals().size() > 1) {
            var kube = new HashMap<String, Long>();
            b.totals().keySet().forEach(name -> kube.put(name, DefaultScore.score(pod, nodes.get(name), bound.getOrDefault(name, List.of()))));
            choices.put(pod.getMetadata().getName(), HostChoice.of(b.node(), b.totals(), kube, weight));
        }
        bound.computeIfAbsent(b.node(), n -> new ArrayList<>()).add(pod);
    }

    /** By pod name. */
    Map<String, HostChoice> byPod() {
        return Map.copyOf(choices);
    }
}
