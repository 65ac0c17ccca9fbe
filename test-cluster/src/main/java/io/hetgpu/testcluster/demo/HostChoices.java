package io.hetgpu.testcluster.demo;

import io.hetgpu.testcluster.scheduler.Decision;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Follows a scheduling round decision by decision and keeps, per pod scored over several nodes, its
 * {@link HostChoice}: kube-scheduler's own scores as the scheduler computed them for that pod, so the
 * extender's share of each total can be told apart.
 */
final class HostChoices {

    private final long weight;
    private final Map<String, HostChoice> choices = new LinkedHashMap<>();

    /** @param weight the extender's weight; 0 without an extender, when there is nothing to tell apart */
    HostChoices(long weight) {
        this.weight = weight;
    }

    void record(Decision decision) {
        if (decision instanceof Decision.Bound b && weight > 0 && b.totals().size() > 1) {
            var name = b.pod().substring(b.pod().indexOf('/') + 1);
            choices.put(name, HostChoice.of(b.node(), b.totals(), b.pluginScores(), weight));
        }
    }

    /** By pod name. */
    Map<String, HostChoice> byPod() {
        return Map.copyOf(choices);
    }
}
