package io.hetgpu.testcluster.scheduler;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One {@code extenders:} entry of a {@code KubeSchedulerConfiguration} (kubescheduler.config.k8s.io/v1),
 * with kube-scheduler's defaults for what the entry leaves out.
 *
 * @param urlPrefix        where the extender listens; verbs are appended as {@code urlPrefix/verb}
 * @param filterVerb       empty when the extender does not filter
 * @param prioritizeVerb   empty when the extender does not score
 * @param preemptVerb      empty when the extender takes no part in preemption
 * @param weight           multiplies the extender's 0..10 scores (then x10 to the 0..100 plugin scale)
 * @param nodeCacheCapable true: the extender gets {@code NodeNames} and keeps its own node cache
 * @param ignorable        true: a failed call is skipped instead of failing the scheduling attempt
 * @param httpTimeout      per call; kube-scheduler's default is 5 s
 * @param managedResources when not empty, only pods requesting one of these reach the extender
 * @param bindVerb         empty when kube-scheduler binds pods itself; else the extender binds the pods it is interested in
 */
public record ExtenderSettings(
        String urlPrefix,
        String filterVerb,
        String prioritizeVerb,
        String preemptVerb,
        long weight,
        boolean nodeCacheCapable,
        boolean ignorable,
        Duration httpTimeout,
        List<String> managedResources,
        String bindVerb) {

    /** kube-scheduler's MaxNodeScore (100) / MaxExtenderPriority (10). */
    public static final long SCORE_SCALE = 10;

    public ExtenderSettings {
        Objects.requireNonNull(urlPrefix, "urlPrefix");
        filterVerb = Objects.requireNonNullElse(filterVerb, "");
        prioritizeVerb = Objects.requireNonNullElse(prioritizeVerb, "");
        preemptVerb = Objects.requireNonNullElse(preemptVerb, "");
        bindVerb = Objects.requireNonNullElse(bindVerb, "");
        managedResources = List.copyOf(managedResources);
        if (weight <= 0) {
            throw new IllegalArgumentException("extenders[].weight must be positive, got " + weight);
        }
    }

    /** An extender that binds nothing itself. */
    public ExtenderSettings(String urlPrefix, String filterVerb, String prioritizeVerb, String preemptVerb, long weight,
                            boolean nodeCacheCapable, boolean ignorable, Duration httpTimeout, List<String> managedResources) {
        this(urlPrefix, filterVerb, prioritizeVerb, preemptVerb, weight, nodeCacheCapable, ignorable, httpTimeout, managedResources, "");
    }

    public boolean binds() {
        return !bindVerb.isEmpty();
    }

    public boolean preempts() {
        return !preemptVerb.isEmpty();
    }

    public boolean filters() {
        return !filterVerb.isEmpty();
    }

    public boolean prioritizes() {
        return !prioritizeVerb.isEmpty();
    }

    /** The same extender at another address (the test cluster runs it on a free local port). */
    public ExtenderSettings at(String newUrlPrefix) {
        return new ExtenderSettings(newUrlPrefix, filterVerb, prioritizeVerb, preemptVerb, weight, nodeCacheCapable,
                ignorable, httpTimeout, managedResources, bindVerb);
    }

    public ExtenderSettings withIgnorable(boolean newIgnorable) {
        return new ExtenderSettings(urlPrefix, filterVerb, prioritizeVerb, preemptVerb, weight, nodeCacheCapable,
                newIgnorable, httpTimeout, managedResources, bindVerb);
    }

    public ExtenderSettings withNodeCacheCapable(boolean capable) {
        return new ExtenderSettings(urlPrefix, filterVerb, prioritizeVerb, preemptVerb, weight, capable,
                ignorable, httpTimeout, managedResources, bindVerb);
    }

    /** The same extender without its bind verb: kube-scheduler binds (the degraded mode of the bind handshake). */
    public ExtenderSettings withoutBindVerb() {
        return new ExtenderSettings(urlPrefix, filterVerb, prioritizeVerb, preemptVerb, weight, nodeCacheCapable,
                ignorable, httpTimeout, managedResources, "");
    }
}
