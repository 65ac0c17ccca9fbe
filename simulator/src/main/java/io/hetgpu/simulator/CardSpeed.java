package io.hetgpu.simulator;

import java.util.Map;

/** How fast a job runs on a card model relative to its workload's reference card (1.0 there). */
@FunctionalInterface
public interface CardSpeed {

    double relative(Job job, String model);

    /** Gavel: the job type's measured steps/s at its GPU count on the card, over the same on the reference card. */
    static CardSpeed gavel(GavelThroughputs throughputs, String reference) {
        if (!GavelThroughputs.CARDS.contains(reference)) {
            throw new IllegalArgumentException("--reference: expected one of " + GavelThroughputs.CARDS + ", got \"" + reference + "\"");
        }
        return (job, model) -> throughputs.stepsPerSecond(job.type(), job.gpus(), model)
                / throughputs.stepsPerSecond(job.type(), job.gpus(), reference);
    }

    /** One factor per card model, whatever the job (for traces that do not say what their jobs are). */
    static CardSpeed fixed(Map<String, Double> byModel) {
        return (job, model) -> {
            var factor = byModel.get(model);
            if (factor == null) {
                throw new IllegalArgumentException("no speed factor for card model " + model);
            }
            return factor;
        };
    }
}
