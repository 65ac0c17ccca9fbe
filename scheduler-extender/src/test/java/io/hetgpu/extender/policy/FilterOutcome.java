package io.hetgpu.extender.policy;

import java.util.List;
import java.util.Map;

/**
 * The filter's answer in kube-scheduler's terms.
 *
 * @param fitting      names of nodes that can take the pod, in request order
 * @param failed       node -> reason, for nodes preemption might free
 * @param unresolvable node -> reason, for nodes nothing can make fit
 */
public record FilterOutcome(List<String> fitting, Map<String, String> failed, Map<String, String> unresolvable) {

    public FilterOutcome {
        fitting = List.copyOf(fitting);
        failed = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(failed));
        unresolvable = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(unresolvable));
    }
}
