package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ThroughputLearnerTest {

    private static final Instant END = Instant.parse("2026-01-01T00:00:00Z");

    static WorkSample run(String workload, String namespace, String card, double perGpuPerSecond) {
        return new WorkSample(workload, namespace, card, 2, 600, perGpuPerSecond * 600 * 2, END);
    }

    @Test
    void aClassRunOnACardIsLearnedAsItsMedianThroughputPerGpu() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (double speed : new double[] {100, 104, 96, 300, 101}) {
            learner.observe(run("ResNet50", "team-a", "V100", speed));
        }
        var speed = learner.table().byClass().get("resnet50").get("V100");
        assertThat(speed.throughputPerGpu()).isEqualTo(101);
        assertThat(speed.samples()).isEqualTo(5);
        assertThat(speed.prior()).isFalse();
    }

    @Test
    void aShortRunIsNotAMeasurement() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var crashed = new WorkSample("resnet50", "team-a", "V100", 1, 30, 3000, END);
        assertThat(learner.observe(crashed)).isInstanceOfSatisfying(Observation.Refused.class,
                refused -> assertThat(refused.reason()).contains("run time: 30.00 s").contains("120.0 s"));
        assertThat(learner.table().byClass()).isEmpty();
    }

    @Test
    void cardsTheClassNeverRanOnGetAPriorFromItsSpeedOnOthers() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.observe(run("bert", "team-a", "V100", 10));
        var a100 = learner.table().byClass().get("bert").get("A100");
        assertThat(a100.prior()).isTrue();
        assertThat(a100.samples()).isZero();
        assertThat(a100.throughputPerGpu()).isCloseTo(10 * 2.5, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aWindowKeepsItsNewestSamplesInOrderWhateverItsSize() {
        for (int window : new int[] {1, 3, 4, 5, 16}) {
            var learner = new ThroughputLearner(new LearningSettings(true, 120, window, 16, 64, 5, 5, 2, true));
            for (int i = 1; i <= 40; i++) {
                learner.observe(run("bert", "team-a", "V100", 100 + i));
                var kept = learner.state().classes().getFirst().cards().getFirst().namespaces().getFirst().throughputsPerGpu();
                var newest = IntStream.rangeClosed(Math.max(1, i - window + 1), i).mapToObj(n -> 100.0 + n).toList();
                assertThat(kept).as("window %d after %d samples", window, i).hasSize(newest.size());
                for (int k = 0; k < kept.size(); k++) {
                    assertThat(kept.get(k)).isCloseTo(newest.get(k), org.assertj.core.data.Offset.offset(1e-9));
                }
                assertThat(learner.table().byClass().get("bert").get("V100").samples()).isEqualTo(newest.size());
            }
        }
    }

    @Test
    void theStateSurvivesItsJson() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        IntStream.range(0, 3).forEach(i -> learner.observe(run("bert", "team-a", "V100", 10 + i)));
        learner.observe(run("bert", "team-b", "T4", 4));
        var restored = new ThroughputLearner(LearningSettings.DEFAULTS);
        restored.restore(LearnedStateCodec.fromJson(LearnedStateCodec.toJson(learner.state())));
        assertThat(restored.state()).isEqualTo(learner.state());
        assertThat(restored.table().byClass()).isEqualTo(learner.table().byClass());
    }

    private static String refusal(Observation observation) {
        assertThat(observation).isInstanceOf(Observation.Refused.class);
        return ((Observation.Refused) observation).reason();
    }

    @Test
    void samplesThatAreNotMeasurementsAreRefusedNamingTheFieldAndValue() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 1, 600, 0, END)))).startsWith("work: ").contains("0.000");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 1, 600, -5, END)))).startsWith("work: ");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 1, 600, Double.NaN, END)))).startsWith("work: ").contains("NaN");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 1, 600, 1e300, END)))).startsWith("work: ").contains("1e15");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "UNKNOWN", 1, 600, 10, END)))).startsWith("card model: unknown card");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "Tesla V100", 1, 600, 10, END))))
                .as("a product name, not a normalised model").startsWith("card model: ");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 0, 600, 10, END)))).startsWith("gpus: ");
        assertThat(refusal(learner.observe(new WorkSample("bert", "a", "V100", 1, Double.POSITIVE_INFINITY, 10, END)))).startsWith("run time: ");
        assertThat(refusal(learner.observe(new WorkSample(" ", "a", "V100", 1, 600, 10, END)))).isEqualTo("workload class: empty");
        assertThat(refusal(learner.observe(new WorkSample("bert\u0000; drop", "a", "V100", 1, 600, 10, END)))).startsWith("workload class: ");
        assertThat(refusal(learner.observe(new WorkSample("x".repeat(64), "a", "V100", 1, 600, 10, END)))).startsWith("workload class: ");
        assertThat(refusal(learner.observe(new WorkSample("bert", "Not_A_Namespace", "V100", 1, 600, 10, END)))).startsWith("namespace: ");
        assertThat(learner.table().byClass()).isEmpty();
        assertThat(learner.table().version()).as("nothing refused changes the table").isZero();
    }

    @Test
    void learningOffRefusesEverything() {
        var learner = new ThroughputLearner(LearningSettings.OFF);
        assertThat(refusal(learner.observe(run("bert", "a", "V100", 10)))).contains("learning is off");
    }

    @Test
    void onceAFigureRestsOnEnoughSamplesAnOutlierIsRefused() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (int i = 0; i < 5; i++) {
            assertThat(learner.observe(run("bert", "a", "V100", 10 + i))).isInstanceOf(Observation.Accepted.class);
        }
        assertThat(refusal(learner.observe(run("bert", "a", "V100", 61)))).startsWith("outlier: ").contains("bert on V100")
                .contains("namespace a's figure 12.00");
        assertThat(refusal(learner.observe(run("bert", "a", "V100", 2)))).startsWith("outlier: ");
        assertThat(learner.observe(run("bert", "a", "V100", 50))).as("within the factor").isInstanceOf(Observation.Accepted.class);
    }

    @Test
    void theFirstNamespaceToMeasureCannotRefuseAnotherNamespacesSamplesAsOutliers() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (int i = 0; i < 10; i++) {
            learner.observe(run("bert", "mallory", "V100", 1000));
        }
        for (int i = 0; i < 10; i++) {
            assertThat(learner.observe(run("bert", "team-a", "V100", 100))).isInstanceOf(Observation.Accepted.class);
        }
    }

    @Test
    void aHostileNamespaceFloodingFakeWorkMovesAnotherNamespacesFigureAtMostByTheBound() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        for (int i = 0; i < 10; i++) {
            learner.observe(run("bert", "team-a", "V100", 100));
        }
        // Absurd figures a thousand times: one vote, its own window, and the two-namespace bound.
        for (int i = 0; i < 1000; i++) {
            learner.observe(run("bert", "mallory", "V100", 1e6));
        }
        assertThat(learner.table().byClass().get("bert").get("V100").throughputPerGpu())
                .as("at most maxNamespaceInfluence (2) times team-a's figure").isCloseTo(200, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(learner.state().classes().getFirst().cards().getFirst().namespaces().getFirst().throughputsPerGpu())
                .as("team-a's samples were not pushed out").hasSize(10);

        // With two honest namespaces, the figure stays between theirs however hard the third one pushes.
        for (int i = 0; i < 10; i++) {
            learner.observe(run("bert", "team-b", "V100", 110));
        }
        for (int i = 0; i < 1000; i++) {
            learner.observe(run("bert", "mallory", "V100", 1e6));
        }
        assertThat(learner.table().byClass().get("bert").get("V100").throughputPerGpu()).isBetween(100.0, 110.0);
        // And pulling down instead: the same bound.
        for (int i = 0; i < 1000; i++) {
            learner.observe(run("bert", "eve", "V100", 1e-3));
        }
        assertThat(learner.table().byClass().get("bert").get("V100").throughputPerGpu())
                .as("four votes: the geometric mean of the middle two, both honest").isCloseTo(Math.sqrt(100.0 * 110), org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aNamespaceThatArrivesSecondMovesTheFigureTowardsItsOwnWithinTheBound() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.observe(run("bert", "team-a", "V100", 100));
        learner.observe(run("bert", "team-b", "V100", 144));
        assertThat(learner.table().byClass().get("bert").get("V100").throughputPerGpu())
                .as("the geometric mean of two namespaces that agree within the bound").isCloseTo(120, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void everyBufferIsBoundedByTheSettings() {
        var settings = new LearningSettings(true, 120, 4, 3, 2, 5, 5, 2, true);
        var learner = new ThroughputLearner(settings);
        for (int i = 0; i < 20; i++) {
            learner.observe(run("bert", "ns" + i, "V100", 10));
            learner.observe(run("bert", "ns0", "V100", 10));
        }
        var cell = learner.state().classes().getFirst().cards().getFirst();
        assertThat(cell.namespaces()).hasSize(3);
        assertThat(cell.namespaces()).allSatisfy(ns -> assertThat(ns.throughputsPerGpu()).hasSizeLessThanOrEqualTo(4));
        assertThat(cell.namespaces()).as("the namespace seen most recently stays").anySatisfy(ns -> assertThat(ns.namespace()).isEqualTo("ns0"));

        learner.observe(run("resnet", "a", "V100", 10));
        learner.observe(run("bert", "a", "V100", 10));
        learner.observe(run("gpt", "a", "V100", 10));
        assertThat(learner.table().byClass()).as("the least recently seen class dropped").containsOnlyKeys("bert", "gpt");
    }

    @Test
    void restoreAppliesThisLearnersBoundsAndSkipsWhatItWouldRefuse() {
        var state = new LearnedState(java.util.List.of(
                new LearnedState.ClassSamples("bert", java.util.List.of(new LearnedState.CardSamples("V100", java.util.List.of(
                        new LearnedState.NamespaceSamples("team-a", java.util.List.of(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)),
                        new LearnedState.NamespaceSamples("Bad Namespace", java.util.List.of(9.0)))))),
                new LearnedState.ClassSamples("no such class!", java.util.List.of(new LearnedState.CardSamples("V100", java.util.List.of(
                        new LearnedState.NamespaceSamples("team-a", java.util.List.of(1.0))))))));
        var learner = new ThroughputLearner(new LearningSettings(true, 120, 4, 16, 64, 5, 5, 2, true));
        learner.restore(state);
        assertThat(learner.table().byClass()).containsOnlyKeys("bert");
        var cell = learner.state().classes().getFirst().cards().getFirst();
        assertThat(cell.namespaces()).hasSize(1);
        assertThat(cell.namespaces().getFirst().throughputsPerGpu()).containsExactly(3.0, 4.0, 5.0, 6.0);
        assertThat(learner.table().version()).isPositive();
    }

    @Test
    void aLearningSourceGivesANewSnapshotOnlyWhenTheLearnerChanges() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var source = ThroughputSource.learning(learner, io.hetgpu.extender.policy.WorkloadThroughputs.NONE);
        var first = source.current();
        assertThat(source.current()).isSameAs(first);
        learner.observe(run("bert", "a", "V100", 10));
        var second = source.current();
        assertThat(second.version()).isGreaterThan(first.version());
        assertThat(second.table().of("bert", "V100")).isEqualTo(10);
        assertThat(second.explore()).isTrue();
        assertThat(ThroughputSource.fixed(io.hetgpu.extender.policy.WorkloadThroughputs.NONE).current().version()).isZero();
    }

    @Test
    void settingsOutOfBoundsAreRefusedNamingTheField() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LearningSettings(true, 120, 0, 16, 64, 5, 5, 2, true))
                .hasMessage("learning.windowSize: expected from 1 to 1024, got 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LearningSettings(true, Double.NaN, 16, 16, 64, 5, 5, 2, true))
                .hasMessageStartingWith("learning.minRunSeconds: ");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LearningSettings(true, 120, 16, 16, 64, 1, 5, 2, true))
                .hasMessageStartingWith("learning.outlierFactor: ");
    }

    @Test
    void aSnapshotSaysWhereEachFigureComesFrom() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.observe(run("bert", "a", "V100", 10));
        learner.observe(run("bert", "a", "V100", 10));
        var configured = new io.hetgpu.extender.policy.WorkloadThroughputs(java.util.Map.of("resnet50", java.util.Map.of("V100", 18.0)));
        var snapshot = ThroughputSource.learning(learner, configured).current();
        assertThat(snapshot.describe("bert", "V100")).isEqualTo("10.00 per GPU-second for bert on V100, learned from 2 samples");
        assertThat(snapshot.describe("bert", "A100")).isEqualTo("25.00 per GPU-second for bert on A100, a prior (never run there)");
        assertThat(snapshot.describe("resnet50", "V100")).isEqualTo("18.00 per GPU-second for resnet50 on V100, from the admin's table");
        assertThat(snapshot.describe("gpt", "V100")).isEmpty();
    }

    private static WorkSample sized(String card, int gpus, double perGpuPerSecond) {
        return new WorkSample("lm", "team-a", card, gpus, 600, perGpuPerSecond * 600 * gpus, END);
    }

    @Test
    void podsOfDifferentSizesAreMeasuredApartAndAClassesCardsAreComparedWithinOneSize() {
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        // One-GPU runs on both cards; four-GPU runs (40 % per GPU, as Gavel's language model scales) on V100 only.
        learner.observe(sized("K80", 1, 10));
        learner.observe(sized("V100", 1, 50));
        for (int i = 0; i < 5; i++) {
            learner.observe(sized("V100", 4, 20));
        }
        var row = learner.table().byClass().get("lm");
        assertThat(row.get("V100").throughputPerGpu()).as("the one-GPU figure, as K80's").isEqualTo(50);
        assertThat(row.get("V100").samples()).isEqualTo(1);
        assertThat(row.get("V100").gpus()).as("the size a figure is for").isEqualTo(1);
        assertThat(row.get("V100").throughputPerGpu() / row.get("K80").throughputPerGpu()).isEqualTo(5);
        assertThat(row.get("A100").gpus()).as("a prior is for no size").isZero();

        // Once four-GPU runs cover more cards, they are the reference, and a card without them keeps its one-GPU figure.
        learner.observe(sized("K80", 4, 4));
        learner.observe(sized("A100", 4, 50));
        row = learner.table().byClass().get("lm");
        assertThat(row.get("V100").throughputPerGpu()).isEqualTo(20);
        assertThat(row.get("K80").throughputPerGpu()).isEqualTo(4);
        assertThat(row.get("A100").throughputPerGpu()).isEqualTo(50);
        assertThat(row.get("V100").gpus()).isEqualTo(2);
        assertThat(row.get("V100").podSize()).isEqualTo("2-4 GPUs");
        assertThat(row.get("H100").podSize()).isEmpty();
        assertThat(ThroughputLearner.bucket(1)).isEqualTo(1);
        assertThat(ThroughputLearner.bucket(3)).isEqualTo(2);
        assertThat(ThroughputLearner.bucket(8)).isEqualTo(5);

        var restored = new ThroughputLearner(LearningSettings.DEFAULTS);
        restored.restore(LearnedStateCodec.fromJson(LearnedStateCodec.toJson(learner.state())));
        assertThat(restored.table().byClass()).isEqualTo(learner.table().byClass());
    }

    @Test
    void samplesFromSeveralThreadsWhileTablesAreReadAreAllCounted() throws Exception {
        var learner = new ThroughputLearner(new LearningSettings(true, 120, 1024, 16, 64, 5, 5, 2, true));
        var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            var writers = new java.util.ArrayList<java.util.concurrent.Future<?>>();
            for (int t = 0; t < 3; t++) {
                var namespace = "ns" + t;
                writers.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        learner.observe(run("bert", namespace, "V100", 10));
                    }
                }));
            }
            var reads = pool.submit(() -> {
                long last = -1;
                while (writers.stream().anyMatch(w -> !w.isDone())) {
                    var table = learner.table();
                    assertThat(table.version()).isGreaterThanOrEqualTo(last);
                    last = table.version();
                }
                return last;
            });
            for (var writer : writers) {
                writer.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            reads.get(30, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(learner.table().version()).isEqualTo(900);
        assertThat(learner.table().byClass().get("bert").get("V100").samples()).isEqualTo(900);
    }
}
