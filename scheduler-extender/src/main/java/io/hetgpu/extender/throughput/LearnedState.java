package io.hetgpu.extender.throughput;

import java.util.List;

/**
 * What the learner keeps, as it is persisted (the ConfigMap {@code hetgpu-throughputs}, {@link LearnedStateCodec}):
 * the samples themselves, not the figures, so that a restart judges outliers and namespaces as before. Lists run from
 * the least to the most recently seen (classes) or first to last seen (namespaces) or oldest to newest (samples).
 * {@link ThroughputLearner#restore} applies its own bounds to whatever it is given.
 */
public record LearnedState(List<ClassSamples> classes) {

    public static final LearnedState EMPTY = new LearnedState(List.of());

    public LearnedState {
        classes = List.copyOf(classes);
    }

    public record ClassSamples(String workloadClass, List<CardSamples> cards) {
        public ClassSamples {
            cards = List.copyOf(cards);
        }
    }

    public record CardSamples(String cardModel, List<NamespaceSamples> namespaces) {
        public CardSamples {
            namespaces = List.copyOf(namespaces);
        }
    }

    /** One namespace's window on one class and card: throughputs per GPU, oldest first. */
    public record NamespaceSamples(String namespace, List<Double> throughputsPerGpu) {
        public NamespaceSamples {
            throughputsPerGpu = List.copyOf(throughputsPerGpu);
        }
    }
}
