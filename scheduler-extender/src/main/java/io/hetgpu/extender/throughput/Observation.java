package io.hetgpu.extender.throughput;

/** What the learner made of a {@link WorkSample}: a measurement it kept, or why not. */
public sealed interface Observation {

    /** Kept: the class's throughput per GPU on the card model, as measured by this sample. */
    record Accepted(String workloadClass, String cardModel, double throughputPerGpu) implements Observation {
    }

    /** Not a measurement; the reason names the field and its value. */
    record Refused(String reason) implements Observation {
    }
}
