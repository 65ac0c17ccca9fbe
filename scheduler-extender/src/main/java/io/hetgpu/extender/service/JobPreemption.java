package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a job of several pods may evict, read from the cluster view: kube-scheduler preempts for one pod at a time and
 * knows no jobs; the preempt verb, asked for a member, answers for its job through the pure rule
 * ({@link JobPreemptionStep}) over the nodes as the informers hold them and every lower-priority pod holding GPUs,
 * grouped by the job it belongs to, each with the devices it holds and the work it would lose. kube-scheduler evicts on
 * one node per attempt: the job's later attempts (this member's again, or another member's) evict the rest of the chosen
 * work, each only where the plan needs it, and the job is placed whole once it fits.
 */
final class JobPreemption {

    private final ClusterView cluster;
    private final NodeStateFactory nodes;

    JobPreemption(ClusterView cluster, NodeStateFactory nodes) {
        this.cluster = cluster;
        this.nodes = nodes;
    }

    /**
     * @param plan     plans the job's waiting members over node states (the verbs' own planner, with the holds of other
     *                 jobs taken)
     * @param priority the preemptor's priority: only pods below it may be evicted
     * @param newestCards whether the job wants the newest cards
     */
    JobPreemptionStep.Answer answer(Function<List<NodeState>, JobPlanner.Outcome> plan, int priority, boolean newestCards, Instant now) {
        var snapshot = cluster.nodes();
        var current = new ArrayList<NodeState>(snapshot.size());
        var victims = new ArrayList<JobPreemptionStep.Victim>();
        for (int i = 0; i < snapshot.size(); i++) {
            var bound = snapshot.boundPods(i);
            var state = nodes.state(snapshot.facts(i), bound);
            current.add(state);
            Map<String, Long> holdings = null;
            for (var pod : bound) {
                if (pod.priority() >= priority || pod.binding() || pod.released() || pod.gpuCount() == 0) {
                    continue;
                }
                if (holdings == null) {
                    holdings = DeviceHoldings.predict(state.gpus(), bound);
                }
                var object = cluster.podByUid(pod.uid());
                var job = object == null ? "" : JobMembershipReader.keyOf(object).orElse("");
                victims.add(new JobPreemptionStep.Victim(pod.uid(), state.name(), job, pod.gpuCount(),
                        holdings.getOrDefault(pod.uid(), 0L), lostBy(object, pod.gpuCount(), now)));
            }
        }
        return JobPreemptionStep.answer(plan, current, victims, newestCards);
    }

    static long lostBy(Pod pod, int gpus, Instant now) {
        if (pod == null) {
            return 0;
        }
        var annotations = pod.getMetadata().getAnnotations() == null ? Map.<String, String>of() : pod.getMetadata().getAnnotations();
        return PreemptionChoice.gpuSecondsLost(gpus, PreemptionChoice.lastSaved(annotations, startOf(pod), now), now);
    }

    /**
     * When the pod started, as an RFC 3339 time: its {@code status.startTime}, else when it was scheduled (its
     * PodScheduled condition), else its creation; null when it has none of them.
     */
    static String startOf(Pod pod) {
        var status = pod.getStatus();
        if (status != null && status.getStartTime() != null) {
            return status.getStartTime();
        }
        if (status != null && status.getConditions() != null) {
            for (var condition : status.getConditions()) {
                if (condition != null && "PodScheduled".equals(condition.getType()) && "True".equals(condition.getStatus())
                        && condition.getLastTransitionTime() != null) {
                    return condition.getLastTransitionTime();
                }
            }
        }
        return pod.getMetadata() == null ? null : pod.getMetadata().getCreationTimestamp();
    }
}
