package io.hetgpu.testcluster.scheduler;

import java.util.List;
import java.util.Map;

/** An extender's filter answer: the nodes it keeps, and why it dropped the others. */
public record FilterOutcome(List<String> feasible, Map<String, String> failed, Map<String, String> failedAndUnresolvable) {

    public FilterOutcome {
        feasible = List.copyOf(feasible);
        failed = Map.copyOf(failed);
        failedAndUnresolvable = Map.copyOf(failedAndUnresolvable);
    }
}
