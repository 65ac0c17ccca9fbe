package io.hetgpu.testcluster.kubelet;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.extender.cluster.EndedPods;
import io.hetgpu.extender.throughput.PodRun;
import io.hetgpu.extender.throughput.WorkSample;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A pod's end as the simulated kubelet writes it, and what the extender's own reader makes of it. */
class PodEndTest {

    private static final SpeedTable SPEEDS = SpeedTable.of("lstm", Map.of("V100", 18.0, "P100", 24.0));
    private static final Instant NOW = Instant.parse("2026-11-28T08:00:00.750Z");

    private static Pod running(Map<String, String> annotations) {
        return new PodBuilder().withNewMetadata().withName("lstm-0").withNamespace("ml").withUid("uid-lstm-0")
                .addToAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withNodeName("dgx1-p100-1")
                .addNewContainer().withName("main").endContainer().addNewContainer().withName("sidecar").endContainer().endSpec()
                .withNewStatus().withPhase("Running").withStartTime("2026-11-28T07:59:59Z")
                .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .addNewCondition().withType("PodScheduled").withStatus("True").endCondition().endStatus().build();
    }

    private static PodEnd ends(Pod pod, List<String> cards) {
        var outcome = PodEnd.of(pod, cards, SPEEDS, NOW);
        assertThat(outcome).isInstanceOf(PodEnd.Outcome.Ends.class);
        return ((PodEnd.Outcome.Ends) outcome).end();
    }

    @Test
    void theRunEndsNowAndStartedAsLongBeforeAsItsWorkTakes() {
        var end = ends(running(Map.of(HetgpuKeys.POD_WORKLOAD, "LSTM", HetgpuKeys.POD_WORK, "86400")), List.of("P100", "P100"));

        assertThat(end).isEqualTo(new PodEnd("lstm", "P100", 2, 86_400, Instant.parse("2026-11-28T07:30:00Z"), Instant.parse("2026-11-28T08:00:00Z")));
        assertThat(end.run()).isEqualTo(Duration.ofMinutes(30));
        assertThat(end.terminationMessage()).isEqualTo("hetgpu.io/work: 86400\n");
    }

    @Test
    void theStatusIsKubeletsForAJobThatExitedAndTheExtenderReadsItAsTheRunItWas() {
        var pod = running(Map.of(HetgpuKeys.POD_WORKLOAD, "lstm", HetgpuKeys.POD_WORK, "86400"));
        var ended = ends(pod, List.of("P100", "P100")).applyTo(pod);

        assertThat(ended.getStatus().getPhase()).isEqualTo("Succeeded");
        assertThat(ended.getStatus().getStartTime()).isEqualTo("2026-11-28T07:59:59Z");
        assertThat(ended.getStatus().getConditions()).filteredOn(c -> c.getType().equals("Ready")).singleElement()
                .satisfies(ready -> assertThat(ready.getStatus()).isEqualTo("False"));
        assertThat(ended.getStatus().getConditions()).anySatisfy(c -> assertThat(c.getType()).isEqualTo("PodScheduled"));
        assertThat(ended.getStatus().getContainerStatuses()).extracting(s -> s.getName()).containsExactly("main", "sidecar");
        var main = ended.getStatus().getContainerStatuses().getFirst().getState().getTerminated();
        assertThat(main.getExitCode()).isZero();
        assertThat(main.getReason()).isEqualTo("Completed");
        assertThat(main.getStartedAt()).isEqualTo("2026-11-28T07:30:00Z");
        assertThat(main.getFinishedAt()).isEqualTo("2026-11-28T08:00:00Z");
        assertThat(main.getMessage()).isEqualTo("hetgpu.io/work: 86400\n");
        assertThat(ended.getStatus().getContainerStatuses().get(1).getState().getTerminated().getMessage()).isNull();

        assertThat(EndedPods.endedRun(ended, Set.of("hetgpu-scheduler"))).isTrue();
        assertThat(PodRun.of(ended, "P100", 2)).isEqualTo(new PodRun.Outcome.Run(
                new WorkSample("lstm", "ml", "P100", 2, 1800, 86_400, Instant.parse("2026-11-28T08:00:00Z"))));
    }

    @Test
    void aFractionalWorkIsWrittenPlainly() {
        var end = ends(running(Map.of(HetgpuKeys.POD_WORKLOAD, "lstm", HetgpuKeys.POD_WORK, "1.5e4")), List.of("V100"));
        assertThat(end.terminationMessage()).isEqualTo("hetgpu.io/work: 15000\n");
        var half = new PodEnd("lstm", "V100", 1, 2500.5, NOW, NOW);
        assertThat(half.terminationMessage()).isEqualTo("hetgpu.io/work: 2500.5\n");
    }

    @Test
    void aPodTheTableCannotTimeIsSaidNamingTheFieldAndValue() {
        assertThat(PodEnd.of(running(Map.of(HetgpuKeys.POD_WORK, "100")), List.of("V100"), SPEEDS, NOW))
                .isEqualTo(new PodEnd.Outcome.CannotEnd("hetgpu.io/workload: none, the speed table needs the pod's class"));
        assertThat(PodEnd.of(running(Map.of(HetgpuKeys.POD_WORKLOAD, "lstm")), List.of("V100"), SPEEDS, NOW))
                .isInstanceOfSatisfying(PodEnd.Outcome.CannotEnd.class, no -> assertThat(no.reason()).startsWith("hetgpu.io/work: none"));
        assertThat(PodEnd.of(running(Map.of(HetgpuKeys.POD_WORKLOAD, "lstm", HetgpuKeys.POD_WORK, "lots")), List.of("V100"), SPEEDS, NOW))
                .isEqualTo(new PodEnd.Outcome.CannotEnd("hetgpu.io/work: \"lots\" is not a number"));
        assertThat(PodEnd.of(running(Map.of(HetgpuKeys.POD_WORKLOAD, "bert", HetgpuKeys.POD_WORK, "100")), List.of("V100"), SPEEDS, NOW))
                .isInstanceOfSatisfying(PodEnd.Outcome.CannotEnd.class, no -> assertThat(no.reason()).contains("\"bert\""));
    }
}
