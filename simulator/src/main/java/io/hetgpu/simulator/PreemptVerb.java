package io.hetgpu.simulator;

import io.hetgpu.kubescheduler.preemption.Victims;
import java.util.List;
import java.util.Map;

/** An extender's preempt verb as the simulation calls it: which of kube-scheduler's candidates it keeps. */
@FunctionalInterface
interface PreemptVerb {

    /** No extender with a preempt verb: kube-scheduler's candidates stand. */
    PreemptVerb NONE = (job, podIndex, earlier, candidates, cluster, victims) -> candidates;

    /**
     * What the extender knows of a running pod: the devices it holds on its node (read from the bind handshake's
     * annotation, exact) and the work an eviction would destroy.
     */
    record VictimFacts(long mask, long gpuSecondsLost) {
    }

    /**
     * @param candidates node name to kube-scheduler's victims there
     * @param victims    pod UID to its facts, for every running pod
     */
    Map<String, Victims> keep(Job job, int podIndex, List<Placer.PodPlacement> earlier, Map<String, Victims> candidates,
                              ClusterState cluster, Map<String, VictimFacts> victims);
}
