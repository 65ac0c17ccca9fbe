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
     * @param runs the runs the window stands for: its size, or more where a window too long to keep was summarised by a
     *             few of its samples around its median ({@link StateFit}); {@link ThroughputLearner#restore} gives each
     *             listed sample its share of the runs, so that the window's median and count come back as they were
     */
    public record NamespaceSamples(String namespace, List<Double> throughputsPerGpu, int gpus, int runs) {
        public NamespaceSamples {
            throughputsPerGpu = List.copyOf(throughputsPerGpu);
            runs = Math.max(runs, throughputsPerGpu.size());
        }

        /** A window as it is: every run listed. */
        public NamespaceSamples(String namespace, List<Double> throughputsPerGpu, int gpus) {
            this(namespace, throughputsPerGpu, gpus, throughputsPerGpu.size());
        }

        /** Samples of one-GPU pods. */
        public NamespaceSamples(String namespace, List<Double> throughputsPerGpu) {
            this(namespace, throughputsPerGpu, 1);
        }

        /** Whether the window lists fewer samples than the runs it stands for. */
        public boolean summarised() {
            return runs > throughputsPerGpu.size();
        }
    }
}
