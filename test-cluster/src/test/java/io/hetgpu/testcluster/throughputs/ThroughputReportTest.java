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
    void theTableSaysWhichPodSizeEachFigureIsFor() {
        // Pods of 8 GPUs ran on three cards, of 1 GPU on A100 and K80, of 4 on T4: the class is compared at 5+ GPUs, the
        // size it ran at on the most cards; K80 and T4 show the only size they ran at.
        var state = new LearnedState(List.of(new ClassSamples("gpt", List.of(
                new CardSamples("H100", List.of(new NamespaceSamples("team-a", List.of(90.0, 92.0), 5))),
                new CardSamples("A100", List.of(new NamespaceSamples("team-a", List.of(40.0, 41.0), 5),
                        new NamespaceSamples("team-a", List.of(50.0), 1))),
                new CardSamples("V100", List.of(new NamespaceSamples("team-a", List.of(20.0, 20.0), 5))),
                new CardSamples("T4", List.of(new NamespaceSamples("team-b", List.of(9.0, 9.5, 10.0), 2))),
                new CardSamples("K80", List.of(new NamespaceSamples("team-b", List.of(3.0), 1)))))));

        var report = ThroughputReport.of("hetgpu-system/hetgpu-throughputs", "https://api", state,
                Set.of("H100", "A100", "V100", "T4", "K80"), List.of());
        var lines = ThroughputsText.render(report).lines().toList();

        int header = lines.indexOf("gpt (10 runs; fastest: H100)") + 1;
        assertThat(header).isPositive();
        assertThat(lines.subList(header, header + 6)).containsExactly(
                "  card          per GPU    runs pod GPUs  of best",
                "  H100             91.0       2       5+     1.00",
                "  A100             40.5       2       5+     0.45",
                "  V100             20.0       2       5+     0.22",
                "  T4              9.500       3      2-4     0.10",
                "  K80             3.000       1        1     0.03");
        assertThat(String.join(" ", lines)).contains("pod GPUs: the size of the pods it was measured on (1, 2-4 or 5+ GPUs");
    }

    @Test
    void figuresAreShownToThreeOrFourDigits() {
        assertThat(List.of(123456.0, 1250.0, 48.25, 0.125, 0.000123).stream().map(ThroughputsText::figure))
                .containsExactly("123,456", "1,250", "48.3", "0.125", "1.23e-04");
    }
}
