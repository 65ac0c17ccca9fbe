package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;

/**
 * An extender as kube-scheduler's scheduling cycle, preemption and binder call it (its framework's Extender interface):
 * over HTTP, as a cluster calls hetgpu's ({@link ExtenderClient}), or its verbs called in process on a copy of the
 * cluster, to ask where a pod would go without changing the cluster. Every call may fail with an
 * {@link ExtenderCallException}, which kube-scheduler treats by the entry's {@code ignorable}.
 */
public interface SchedulerExtender {

    /** The extender's entry in kube-scheduler's configuration. */
    ExtenderSettings settings();

    /** kube-scheduler's IsInterested: with managedResources set, only pods requesting one of them. */
    default boolean isInterested(Pod pod) {
        if (settings().managedResources().isEmpty()) {
            return true;
        }
        var request = ApiObjects.request(pod);
        return settings().managedResources().stream().anyMatch(request::requests);
    }

    FilterOutcome filter(Pod pod, List<Node> nodes) throws ExtenderCallException;

    /** Scores 0..10 by node name; kube-scheduler multiplies them by weight and by 10. */
    Map<String, Long> prioritize(Pod pod, List<Node> nodes) throws ExtenderCallException;

    /**
     * The preempt verb (ProcessPreemption): kube-scheduler's candidates and their victims; the answer, the candidates the
     * extender keeps with the victims it names, by UID, and their budget violations.
     */
    Map<String, Map.Entry<List<String>, Long>> preempt(Pod pod, Map<String, List<Pod>> victims, Map<String, Long> pdbViolations)
            throws ExtenderCallException;

    /** The bind verb: "" when bound, else why not, and kube-scheduler retries the pod. */
    String bind(Pod pod, String node) throws ExtenderCallException;
}
