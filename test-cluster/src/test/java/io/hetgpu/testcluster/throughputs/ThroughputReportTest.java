package io.hetgpu.testcluster.throughputs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedState.CardSamples;
import io.hetgpu.extender.throughput.LearnedState.ClassSamples;
import io.hetgpu.extender.throughput.LearnedState.NamespaceSamples;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The report's figures are the extender's: computed by its learner from the persisted samples, its bounds applied. */
class ThroughputReportTest {

    @Test
    void aFigureIsTheMedianOfTheNamespacesVotesNotOfTheirSamples() {
        // team-a floods 12 samples at 1000; team-b and team-c say 100 and 110: the figure is the middle vote.
        var state = new LearnedState(List.of(new ClassSamples("bert", List.of(new CardSamples("A100", List.of(
                new NamespaceSamples("team-a", java.util.Collections.nCopies(12, 1000.0)),
                new NamespaceSamples("team-b", List.of(100.0)),
                new NamespaceSamples("team-c", List.of(110.0))))))));

        var report = ThroughputReport.of("hetgpu-system/hetgpu-throughputs", "https://api", state, Set.of("A100"), List.of());

        var a100 = report.classes().getFirst().cards().stream().filter(card -> card.card().equals("A100")).findFirst().orElseThrow();
        assertThat(a100.perGpu()).isEqualTo(110.0);
        assertThat(a100.samples()).isEqualTo(14);
        assertThat(report.notes()).isEmpty();
    }

    @Test
    void samplesTheExtenderWouldNotKeepAreLeftOutAndCounted() {
        var state = new LearnedState(List.of(
                new ClassSamples("bert", List.of(new CardSamples("A100", List.of(
                        new NamespaceSamples("team-a", List.of(100.0)), new NamespaceSamples("Not A Namespace", List.of(500.0, 600.0)))))),
                new ClassSamples("no spaces allowed", List.of(new CardSamples("A100", List.of(new NamespaceSamples("team-a", List.of(1.0))))))));

        var report = ThroughputReport.of("hetgpu-system/hetgpu-throughputs", "https://api", state, null, List.of());

        assertThat(report.classes()).extracting(ThroughputReport.ClassFigures::workloadClass).containsExactly("bert");
        assertThat(report.notes()).containsExactly("3 of the document's 4 samples are left out, as the extender leaves them out: a class"
                + " name, card model, namespace or figure the learner refuses, or beyond its bounds");
        assertThat(report.classes().getFirst().cards()).allSatisfy(card -> assertThat(card.onCluster()).isNull());
    }

    @Test
    void runsOfEverySizeAreKeptThoughAFigureComesFromOneSize() {
        // Pods of 1 and of 8 GPUs are measured apart; the table's figure is the 1-GPU one, and nothing is left out.
        var state = new LearnedState(List.of(new ClassSamples("bert", List.of(new CardSamples("A100", List.of(
                new NamespaceSamples("team-a", List.of(100.0, 104.0), 1), new NamespaceSamples("team-a", List.of(60.0, 62.0, 61.0), 5)))))));

        var report = ThroughputReport.of("hetgpu-system/hetgpu-throughputs", "https://api", state, Set.of("A100"), List.of());

        assertThat(report.notes()).isEmpty();
        var a100 = report.classes().getFirst().cards().stream().filter(card -> card.card().equals("A100")).findFirst().orElseThrow();
        assertThat(a100.samples()).isEqualTo(2);
        assertThat(a100.perGpu()).isCloseTo(Math.sqrt(100.0 * 104.0), org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void figuresAreShownToThreeOrFourDigits() {
        assertThat(List.of(123456.0, 1250.0, 48.25, 0.125, 0.000123).stream().map(ThroughputsText::figure))
                .containsExactly("123,456", "1,250", "48.3", "0.125", "1.23e-04");
    }
}
