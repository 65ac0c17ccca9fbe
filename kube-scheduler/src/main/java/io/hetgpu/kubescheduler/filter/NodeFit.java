package io.hetgpu.kubescheduler.filter;

import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.SchedulingPod;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

/**
 * The part of kube-scheduler's own filtering that matters for GPU placement: NodeUnschedulable,
 * NodeName, NodeSelector, TaintToleration and NodeResourcesFit (cpu, memory, pods and extended
 * resources such as {@code nvidia.com/gpu}), in that order, each answering in kube-scheduler's words.
 * Affinity, ports and volume binding are not modelled.
 */
public final class NodeFit {

    private NodeFit() {
    }

    /**
     * Why a pod cannot run on a node, and whether evicting pods could change that: kube-scheduler's Unschedulable
     * (resources) against UnschedulableAndUnresolvable (the node's settings), which preemption skips.
     */
    public record Refusal(String reason, boolean unresolvable) {
    }

    /** The refusal, or empty when the pod fits. */
    public static Optional<Refusal> judge(SchedulingPod pod, SchedulingNode node, List<ResourceRequest> podsOnNode) {
        var settings = settingsRefusal(pod, node);
        if (settings.isPresent()) {
            return settings.map(reason -> new Refusal(reason, true));
        }
        return insufficientResource(pod.request(), node, podsOnNode).map(reason -> new Refusal(reason, false));
    }

    /** Why the pod cannot run on the node, in kube-scheduler's words, or empty when it fits. */
    public static Optional<String> check(SchedulingPod pod, SchedulingNode node, List<ResourceRequest> podsOnNode) {
        return judge(pod, node, podsOnNode).map(Refusal::reason);
    }

    private static Optional<String> settingsRefusal(SchedulingPod pod, SchedulingNode node) {
        if (node.unschedulable()) {
            return Optional.of("node(s) were unschedulable");
        }
        if (!pod.nodeName().isEmpty() && !pod.nodeName().equals(node.name())) {
            return Optional.of("node(s) didn't match the requested node name");
        }
        for (var entry : pod.nodeSelector().entrySet()) {
            if (!entry.getValue().equals(node.labels().get(entry.getKey()))) {
                return Optional.of("node(s) didn't match Pod's node affinity/selector");
            }
        }
        for (var taint : node.taints()) {
            if (!"PreferNoSchedule".equals(taint.effect()) && pod.tolerations().stream().noneMatch(t -> t.tolerates(taint))) {
                return Optional.of("node(s) had untolerated taint {" + taint.key()
                        + (taint.value().isEmpty() ? "" : ": " + taint.value()) + "}");
            }
        }
        return Optional.empty();
    }

    /** NodeResourcesFit alone: room for one more pod and for each resource the pod requests. */
    public static Optional<String> insufficientResource(ResourceRequest pod, SchedulingNode node, List<ResourceRequest> podsOnNode) {
        var podsLimit = node.allocatable().get("pods");
        if (podsLimit != null && podsOnNode.size() + 1 > podsLimit.intValue()) {
            return Optional.of("Too many pods");
        }
        for (var entry : pod.amounts().entrySet()) {
            if (entry.getValue().signum() <= 0) {
                continue;
            }
            var used = podsOnNode.stream().map(p -> p.get(entry.getKey())).reduce(BigDecimal.ZERO, BigDecimal::add);
            if (used.add(entry.getValue()).compareTo(node.allocatable(entry.getKey())) > 0) {
                return Optional.of("Insufficient " + entry.getKey());
            }
        }
        return Optional.empty();
    }
}
