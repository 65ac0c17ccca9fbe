package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import java.util.List;

/**
 * What the API server's Priority admission plugin writes on a pod as it is created: its PriorityClass's value and
 * preemption policy (the global default class's for a pod that names none, else priority 0), or the refusal of a pod
 * that names a class the cluster does not have. The in-process API server runs no admission, so pods are created as
 * admission would have left them; a pod that says its priority already ({@code spec.priority}) is left as it is.
 *
 * @param classes the cluster's PriorityClasses
 */
public record PriorityAdmission(List<PriorityClass> classes) {

    public PriorityAdmission {
        classes = List.copyOf(classes);
    }

    /** The pod as admitted, or why the API server refuses it. */
    public sealed interface Outcome permits Admitted, Refused {
    }

    public record Admitted(Pod pod) implements Outcome {
    }

    /** @param reason the API server's words */
    public record Refused(String reason) implements Outcome {
    }

    public Outcome admit(Pod pod) {
        var spec = pod.getSpec();
        if (spec == null || spec.getPriority() != null) {
            return new Admitted(pod);
        }
        var name = spec.getPriorityClassName();
        PriorityClass chosen = null;
        for (var candidate : classes) {
            boolean wanted = name == null || name.isEmpty() ? Boolean.TRUE.equals(candidate.getGlobalDefault())
                    : name.equals(candidate.getMetadata().getName());
            if (wanted) {
                chosen = candidate;
                break;
            }
        }
        if (chosen == null && name != null && !name.isEmpty()) {
            return new Refused("pods \"" + pod.getMetadata().getName() + "\" is forbidden: no PriorityClass with name " + name + " was found");
        }
        var admitted = new PodBuilder(pod).editSpec().withPriority(chosen == null ? 0 : chosen.getValue()).endSpec().build();
        if (chosen != null && admitted.getSpec().getPreemptionPolicy() == null) {
            admitted.getSpec().setPreemptionPolicy(chosen.getPreemptionPolicy() == null ? "PreemptLowerPriority" : chosen.getPreemptionPolicy());
        }
        return new Admitted(admitted);
    }
}
