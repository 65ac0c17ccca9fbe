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

    /**
     * One namespace's window on one class and card, for pods of one size: throughputs per GPU, oldest first.
     *
     * @param gpus the size bucket's smallest GPU count: 1, 2 (2 to 4 GPUs) or 5 (5 and more)
     */
    public record NamespaceSamples(String namespace, List<Double> throughputsPerGpu, int gpus) {
        public NamespaceSamples {
            throughputsPerGpu = List.copyOf(throughputsPerGpu);
        }

        /** Samples of one-GPU pods. */
        public NamespaceSamples(String namespace, List<Double> throughputsPerGpu) {
            this(namespace, throughputsPerGpu, 1);
        }
    }
}
