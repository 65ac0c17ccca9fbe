package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The part of kube-scheduler's own filtering that matters for GPU placement: NodeUnschedulable,
 * NodeName, NodeSelector, TaintToleration and NodeResourcesFit (cpu, memory, pods and extended
 * resources such as {@code nvidia.com/gpu}). Affinity, ports and volume binding are not modelled.
 */
public final class NodeFit {

    private NodeFit() {
    }

    /** Why the pod cannot run on the node, in kube-scheduler's words, or empty when it fits. */
    public static Optional<String> check(Pod pod, Node node, List<Pod> podsOnNode) {
        var spec = node.getSpec();
        if (spec != null && Boolean.TRUE.equals(spec.getUnschedulable())) {
            return Optional.of("node(s) were unschedulable");
        }
        var wanted = pod.getSpec().getNodeName();
        if (wanted != null && !wanted.isEmpty() && !wanted.equals(node.getMetadata().getName())) {
            return Optional.of("node(s) didn't match the requested node name");
        }
        var selector = pod.getSpec().getNodeSelector();
        if (selector != null && !selector.isEmpty()) {
            var labels = Objects.requireNonNullElse(node.getMetadata().getLabels(), Map.<String, String>of());
            for (var entry : selector.entrySet()) {
                if (!entry.getValue().equals(labels.get(entry.getKey()))) {
                    return Optional.of("node(s) didn't match Pod's node affinity/selector");
                }
            }
        }
        if (spec != null && spec.getTaints() != null) {
            var tolerations = Objects.requireNonNullElse(pod.getSpec().getTolerations(), List.<Toleration>of());
            for (var taint : spec.getTaints()) {
                if (!"PreferNoSchedule".equals(taint.getEffect()) && tolerations.stream().noneMatch(t -> tolerates(t, taint))) {
                    return Optional.of("node(s) had untolerated taint {" + taint.getKey()
                            + (taint.getValue() == null ? "" : ": " + taint.getValue()) + "}");
                }
            }
        }
        return insufficientResource(pod, node, podsOnNode);
    }

    private static Optional<String> insufficientResource(Pod pod, Node node, List<Pod> podsOnNode) {
        var allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null
                ? Map.<String, Quantity>of() : node.getStatus().getAllocatable();
        var podsLimit = allocatable.get("pods");
        if (podsLimit != null && podsOnNode.size() + 1 > podsLimit.getNumericalAmount().intValue()) {
            return Optional.of("Too many pods");
        }
        var request = ResourceRequest.of(pod);
        for (var entry : request.amounts().entrySet()) {
            if (entry.getValue().signum() <= 0) {
                continue;
            }
            var capacity = allocatable.containsKey(entry.getKey()) ? allocatable.get(entry.getKey()).getNumericalAmount() : BigDecimal.ZERO;
            var used = podsOnNode.stream().map(p -> ResourceRequest.of(p).get(entry.getKey())).reduce(BigDecimal.ZERO, BigDecimal::add);
            if (used.add(entry.getValue()).compareTo(capacity) > 0) {
                return Optional.of("Insufficient " + entry.getKey());
            }
        }
        return Optional.empty();
    }

    private static boolean tolerates(Toleration toleration, Taint taint) {
        if (toleration.getEffect() != null && !toleration.getEffect().isEmpty() && !toleration.getEffect().equals(taint.getEffect())) {
            return false;
        }
        if (toleration.getKey() == null || toleration.getKey().isEmpty()) {
            return "Exists".equals(toleration.getOperator());
        }
        if (!toleration.getKey().equals(taint.getKey())) {
            return false;
        }
        return "Exists".equals(toleration.getOperator())
                || Objects.equals(Objects.requireNonNullElse(toleration.getValue(), ""), Objects.requireNonNullElse(taint.getValue(), ""));
    }
}
