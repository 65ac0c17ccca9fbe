package io.hetgpu.extender.wire;

import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's {@code ExtenderFilterResult}: exactly one of {@code nodes} (answer to a Nodes request)
 * and {@code nodeNames} (answer to a NodeNames request) is set, unless {@code error} is.
 */
public record FilterResult(List<WireNode> nodes, List<String> nodeNames, Map<String, String> failedNodes,
                           Map<String, String> failedAndUnresolvableNodes, String error) {

    public static FilterResult error(String message) {
        return new FilterResult(null, null, Map.of(), Map.of(), message);
    }
}
