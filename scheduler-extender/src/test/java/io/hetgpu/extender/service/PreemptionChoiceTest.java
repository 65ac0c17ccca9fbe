package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.service.PreemptionChoice.Option;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PreemptionChoiceTest {

    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");

    @Test
    void aPodThatWantsTheNewestCardsKeepsOnlyTheCandidatesThatGiveThem() {
        // An H100 node (rank 100) and an A100 node (rank 90): the A100's victims lose less work, but the pod wants the newest.
        var options = List.of(new Option("a100", 90, 0, 100), new Option("h100", 100, 0, 5_000), new Option("h100-b", 100, 0, 7_000));
        assertThat(PreemptionChoice.keep(options, true)).containsExactly("h100");
        assertThat(PreemptionChoice.keep(options, false)).containsExactly("a100");
    }

    @Test
    void amongEqualCardsTheLeastWorkLostIsKeptAndTiesAllStay() {
        var options = List.of(new Option("n1", 90, 0, 3_600), new Option("n2", 90, 0, 600), new Option("n3", 90, 0, 600));
        assertThat(PreemptionChoice.keep(options, true)).containsExactly("n2", "n3");
    }

    @Test
    void aCandidateThatBreaksADisruptionBudgetLosesToOneThatBreaksNoneWhateverItsCards() {
        var options = List.of(new Option("h100-budgeted", 100, 1.0, 0, 1), new Option("a100", 90, 0, 3_600, 0));
        assertThat(PreemptionChoice.keep(options, true)).containsExactly("a100");
    }

    @Test
    void amongEqualCardsTheClosestToTheJobComesBeforeTheLeastWorkLost() {
        // On the node of the job's other pod (1.0), in its rack (0.6), elsewhere (0).
        var options = List.of(new Option("elsewhere", 90, 0, 60), new Option("same-rack", 90, 0.6, 600), new Option("same-node", 90, 1.0, 3_600),
                new Option("same-node-older", 80, 1.0, 0));
        assertThat(PreemptionChoice.keep(options, true)).containsExactly("same-node");
        // Without a wish for the newest cards, the tier does not count: the closest, then the least work.
        assertThat(PreemptionChoice.keep(options, false)).containsExactly("same-node-older");
    }

    @Test
    void urgentPodsGatherWhereUrgentPodsRunWhileThatCostsLittleMoreWork() {
        // "gathered" already holds 6 GPUs of pods the preemptor cannot evict; evicting there costs 5 GPU-minutes more
        // than on "whole", whose GPUs are all evictable and stay so for the next urgent gang.
        var slack = PreemptionChoice.GATHERING_SLACK_GPU_SECONDS;
        var within = List.of(new Option("whole", 90, 0, 1_000, 0, 0), new Option("gathered", 90, 0, 1_000 + slack / 2, 0, 6));
        assertThat(PreemptionChoice.keep(within, true)).containsExactly("gathered");
        // Beyond the slack the least work lost wins.
        var beyond = List.of(new Option("whole", 90, 0, 1_000, 0, 0), new Option("gathered", 90, 0, 1_001 + slack, 0, 6));
        assertThat(PreemptionChoice.keep(beyond, true)).containsExactly("whole");
        // Closeness to the job comes first.
        var near = List.of(new Option("whole-near", 90, 1.0, 1_000, 0, 0), new Option("gathered", 90, 0, 1_000, 0, 6));
        assertThat(PreemptionChoice.keep(near, true)).containsExactly("whole-near");
    }

    @Test
    void workIsLostSinceTheLastCheckpointElseSinceTheStart() {
        var started = "2026-11-22T08:00:00Z";
        var checkpointed = Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-22T11:30:00Z");
        assertThat(PreemptionChoice.lastSaved(checkpointed, started, NOW)).isEqualTo(Instant.parse("2026-11-22T11:30:00Z"));
        assertThat(PreemptionChoice.gpuSecondsLost(8, PreemptionChoice.lastSaved(checkpointed, started, NOW), NOW)).isEqualTo(8 * 1800);
        assertThat(PreemptionChoice.lastSaved(Map.of(), started, NOW)).isEqualTo(Instant.parse(started));
    }

    @Test
    void anUnreadableCheckpointIsIgnoredAFutureOneCountsAsJustSavedAndAPodNotStartedLosesNothing() {
        var started = "2026-11-22T08:00:00Z";
        assertThat(PreemptionChoice.lastSaved(Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "yesterday"), started, NOW)).isEqualTo(Instant.parse(started));
        assertThat(PreemptionChoice.lastSaved(Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-23T00:00:00Z"), started, NOW))
                .isEqualTo(NOW);
        assertThat(PreemptionChoice.lastSaved(Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-22T13:00:00+01:00"), started, NOW))
                .as("offsets are read").isEqualTo(NOW);
        assertThat(PreemptionChoice.gpuSecondsLost(4, PreemptionChoice.lastSaved(Map.of(), null, NOW), NOW)).isZero();
        assertThat(PreemptionChoice.lastSaved(Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "1970-01-01T00:00:00Z"), null, NOW)).isEqualTo(NOW);
    }

    @Test
    void aCheckpointFromBeforeThePodStartedCountsFromItsStart() {
        var started = "2026-11-22T11:00:00Z";
        var epoch = Map.of(HetgpuKeys.POD_CHECKPOINTED_AT, "1970-01-01T00:00:00Z");
        assertThat(PreemptionChoice.lastSaved(epoch, started, NOW)).isEqualTo(Instant.parse(started));
        assertThat(PreemptionChoice.gpuSecondsLost(8, PreemptionChoice.lastSaved(epoch, started, NOW), NOW)).isEqualTo(8 * 3600);
    }
}
