package io.hetgpu.extender.policy;

import io.hetgpu.gpu.Quote;

/** What a filter says about one node: it fits, or it does not and why. */
public sealed interface Verdict permits Verdict.Fits, Verdict.Rejected {

    Fits FITS = new Fits();

    /**
     * The longest reason given for one node. The policy's own reasons are one line (under 200 characters); a node's
     * unreadable annotations can add a few quoted, already cut values. The cap is what keeps an answer that refuses every
     * node within a fixed size per node named: see README, "What one caller can hold". Cut where the reason is made, once
     * per assessment (which the extender remembers), not once per node in every answer.
     */
    int MAX_REASON_CHARS = 300;

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
        public Rejected {
            reason = Quote.cut(reason, MAX_REASON_CHARS);
        }
    }
}
