package io.hetgpu.extender.policy;

/** What a filter says about one node: it fits, or it does not and why. */
public sealed interface Verdict permits Verdict.Fits, Verdict.Rejected {

    Fits FITS = new Fits();

    static Rejected retryable(String reason) {
        return new Rejected(reason, false);
    }

    /** A reason no preemption can fix (kube-scheduler then does not try to preempt on that node). */
    static Rejected unresolvable(String reason) {
        return new Rejected(reason, true);
    }

    record Fits() implements Verdict {
    }

    /**
     * @param reason       one line for kube-scheduler's FailedNodes, e.g. "2 free V100, pod needs 4 with NVLink"
     * @param unresolvable true when evicting pods would not help (wrong cards, too few GPUs in total, bad annotation)
     */
    record Rejected(String reason, boolean unresolvable) implements Verdict {
    }
}
