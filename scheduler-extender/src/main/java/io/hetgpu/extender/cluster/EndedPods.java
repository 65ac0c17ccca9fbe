package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeGpuReader;
import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.gpu.Quote;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which pods' ends the learner hears of, and on which cards they ran: pure rules over a pod and its node, for
 * {@link ThroughputLearning}.
 */
public final class EndedPods {

    private EndedPods() {
    }

    /**
     * A pod of one of {@code schedulerNames} that ran on a node and has ended: Succeeded, or Failed (an eviction among
     * them; whether a failed run is a measurement is the learner's to say). Pods of other schedulers are no business of
     * hetgpu's: their cards were not chosen by its policy, and their authors never agreed to be measured.
     */
    public static boolean endedRun(Pod pod, Set<String> schedulerNames) {
        if (pod == null || pod.getMetadata() == null || pod.getMetadata().getUid() == null || pod.getSpec() == null
                || pod.getStatus() == null) {
            return false;
        }
        var node = pod.getSpec().getNodeName();
        if (node == null || node.isEmpty() || !schedulerNames.contains(pod.getSpec().getSchedulerName())) {
            return false;
        }
        var phase = pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    /** The card model a run was measured on, or why it cannot be told. */
    public sealed interface Cards {
        record Model(String model) implements Cards {
        }

        record Unknown(String reason) implements Cards {
        }
    }

    /**
     * The model of the cards the pod held: those its {@code hetgpu.io/gpu-devices} record names where {@code trust} trusts
     * it (a record a pod's author wrote could claim a faster card than it ran on), else the node's cards where they are
     * all of one model. A node of mixed models without a trusted record, a node gone, or GPUs of unknown model: no model.
     *
     * @param node the pod's node as the informers see it now, or null
     */
    public static Cards cardsOf(Pod pod, int gpus, NodeFacts node, NodeGpuReader reader, RecordTrust trust) {
        var nodeName = pod.getSpec().getNodeName();
        if (node == null) {
            return new Cards.Unknown("node " + Quote.of(nodeName) + " no longer known");
        }
        var gpusThere = reader.read(node);
        if (gpusThere.size() == 0) {
            return new Cards.Unknown("node " + Quote.of(nodeName) + ": no readable GPUs"
                    + (gpusThere.problem().isEmpty() ? "" : " (" + gpusThere.problem() + ")"));
        }
        List<String> devices = BoundPods.assignedDevices(pod, gpus, trust);
        var mask = gpusThere.maskOf(devices);
        var models = new TreeSet<String>();
        for (int i = 0; i < gpusThere.size(); i++) {
            if (mask.isEmpty() || (mask.getAsLong() & (1L << i)) != 0) {
                models.add(gpusThere.topology().device(i).model());
            }
        }
        if (models.size() != 1) {
            return new Cards.Unknown("node " + Quote.of(nodeName) + " has cards of several models " + models
                    + " and the pod has no trusted record of which it held");
        }
        var model = models.first();
        if (NodeGpus.UNKNOWN_MODEL.equals(model) || gpusThere.source() instanceof NodeGpuSource.AllocatableOnly) {
            return new Cards.Unknown("node " + Quote.of(nodeName) + ": the model of its GPUs is unknown");
        }
        return new Cards.Model(model);
    }
}
