package io.hetgpu.simulator;

import io.hetgpu.kubescheduler.preemption.CandidateSampling;
import io.hetgpu.kubescheduler.preemption.DefaultPreemption;
import java.util.Random;

/** Whether a scheduler preempts for a pod no node takes, and with which extender preempt verb. */
sealed interface Preempting {

    Never NEVER = new Never();

    /** kube-scheduler without DefaultPreemption, or with no PriorityClasses to act on: the pod waits. */
    record Never() implements Preempting {
    }

    /**
     * kube-scheduler's DefaultPreemption, through the kube-scheduler model's own step.
     *
     * @param verb the extender's preempt verb, or {@link PreemptVerb#NONE} when no extender has one
     */
    record Kube(DefaultPreemption model, PreemptVerb verb) implements Preempting {

        /** DefaultPreemption with kube-scheduler's candidate sampling, its walk offsets drawn from {@code seed}. */
        static Kube seeded(long seed, PreemptVerb verb) {
            return new Kube(new DefaultPreemption(CandidateSampling.DEFAULTS, new Random(seed)), verb);
        }
    }
}
