package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.Locale;
import java.util.Set;

/**
 * Where {@code spec.priority} stops being neutral: at or above {@code high} a pod prefers the newest
 * tier, at or below {@code low} the oldest tier that fits. By default a pod without a PriorityClass
 * (priority 0, Kubernetes' default) is neutral and only negative priorities count as low: treating
 * every unclassified pod as low priority pushed ordinary work onto the oldest cards and, in the
 * simulator, lengthened the mean job completion time by a third.
 *
 * <p>A pod's {@code hetgpu.io/priority} annotation may lower the level its {@code spec.priority} gives, never raise it,
 * unless the pod's namespace is one of {@code trustedNamespaces}: any pod author can write an annotation, while only an
 * admin grants a PriorityClass, and a high level skips the job headroom and the high-priority reserve.
 *
 * @param trustedNamespaces namespaces whose pods' annotation may also raise their level (none by default)
 */
public record PriorityThresholds(int high, int low, Set<String> trustedNamespaces) {

    public static final PriorityThresholds DEFAULTS = new PriorityThresholds(1000, -1);

    public PriorityThresholds {
        if (low >= high) {
            throw new IllegalArgumentException("the low priority threshold (" + low + ") must be below the high one (" + high + ")");
        }
        trustedNamespaces = Set.copyOf(trustedNamespaces);
    }

    /** Thresholds that trust no namespace to raise a pod's level. */
    public PriorityThresholds(int high, int low) {
        this(high, low, Set.of());
    }

    /** The level {@code spec.priority} alone gives: high, low or normal. */
    public PriorityHint levelOf(int specPriority) {
        return specPriority >= high ? PriorityHint.HIGH : specPriority <= low ? PriorityHint.LOW : PriorityHint.NORMAL;
    }

    /** The pod's level: its annotation where that counts ({@link #ignoresHint}), else what its spec.priority gives; never UNSET. */
    public PriorityHint levelOf(PodRequest pod) {
        var byClass = levelOf(pod.specPriority());
        return pod.priorityHint() == PriorityHint.UNSET || ignoresHint(pod) ? byClass : pod.priorityHint();
    }

    /** Whether the pod's annotation asks for more than its spec.priority gives, outside the trusted namespaces. */
    public boolean ignoresHint(PodRequest pod) {
        return pod.priorityHint().raises(levelOf(pod.specPriority())) && !trustedNamespaces.contains(pod.namespace());
    }

    /** Why the pod's annotation does not count, in a few words for its placement explanation; "" when it counts. */
    public String ignoredHint(PodRequest pod) {
        if (!ignoresHint(pod)) {
            return "";
        }
        return HetgpuKeys.POD_PRIORITY + ": " + pod.priorityHint().name().toLowerCase(Locale.ROOT) + " ignored, spec.priority "
                + pod.specPriority() + " gives " + levelOf(pod.specPriority()).name().toLowerCase(Locale.ROOT)
                + " (only a trusted namespace may raise it)";
    }
}
