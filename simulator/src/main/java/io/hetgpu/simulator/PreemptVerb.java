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
     *
     * @param gpuSecondsLost for a pod of a job of several, its whole job's: the job restarts whole, whichever pod is evicted
     * @param job            the job of several it belongs to, or "" (a job's loss is counted once however many of its pods go)
     */
    record VictimFacts(long mask, long gpuSecondsLost, String job) {
    }

    /**
     * @param candidates node name to kube-scheduler's victims there
     * @param victims    pod UID to its facts, for every running pod
     */
    Map<String, Victims> keep(Job job, int podIndex, List<Placer.PodPlacement> earlier, Map<String, Victims> candidates,
                              ClusterState cluster, Map<String, VictimFacts> victims);
}
