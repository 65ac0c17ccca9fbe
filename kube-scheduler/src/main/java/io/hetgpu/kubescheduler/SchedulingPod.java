package io.hetgpu.kubescheduler;

import java.util.List;
import java.util.Map;

/**
 * What kube-scheduler's filters and default scorers read of a Pod.
 *
 * @param nodeName {@code spec.nodeName}, empty when the pod names no node
 */
public record SchedulingPod(String nodeName, Map<String, String> nodeSelector, List<Toleration> tolerations,
                            ResourceRequest request) {

    public SchedulingPod {
        nodeSelector = Map.copyOf(nodeSelector);
        tolerations = List.copyOf(tolerations);
    }

    /** A pod that asks for these resources and nothing else of a node. */
    public static SchedulingPod requesting(ResourceRequest request) {
        return new SchedulingPod("", Map.of(), List.of(), request);
    }

    /** A toleration as {@code spec.tolerations} lists it; empty strings where a field is absent. */
    public record Toleration(String key, String operator, String value, String effect) {

        /** kube-scheduler's {@code ToleratesTaint}: an empty key with Exists tolerates every taint. */
        public boolean tolerates(SchedulingNode.Taint taint) {
            if (!effect.isEmpty() && !effect.equals(taint.effect())) {
                return false;
            }
            if (key.isEmpty()) {
                return "Exists".equals(operator);
            }
            return key.equals(taint.key()) && ("Exists".equals(operator) || value.equals(taint.value()));
        }
    }
}
