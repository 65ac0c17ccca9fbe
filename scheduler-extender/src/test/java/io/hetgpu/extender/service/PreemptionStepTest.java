package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.model.WaitingPeer;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreemptionStepTest {

    private final PlacementPolicy policy = new PlacementPolicy(ExtenderConfig.DEFAULTS.policy());

    @Test
    void keepsTheNewestTierThenTheLeastWorkLostAndSaysWhyForTheRest() {
        var pod = TestPods.priority(TestPods.gpus(1), 1000, PriorityHint.UNSET, GpuPreference.UNSET);
        var k80 = TestNodes.gpu("old", TestTopologies::k80x4, 0, 1, 2, 3);
        var v100 = TestNodes.gpu("new-a", TestTopologies::dgx1V100, 0);
        var v100Costly = TestNodes.gpu("new-b", TestTopologies::dgx1V100, 0);
        var verdict = PreemptionStep.judge(policy, pod, ClosedTier.NONE, PlacementContext.EMPTY, List.of(
                new PreemptionStep.Proposal("old", k80, 10),
                new PreemptionStep.Proposal("new-a", v100, 3_600),
                new PreemptionStep.Proposal("new-b", v100Costly, 7_200)));

        assertThat(verdict.kept()).containsExactly("new-a");
        assertThat(verdict.freed()).containsOnlyKeys("new-a");
        assertThat(verdict.refused()).containsEntry("old", "older cards than another candidate's")
                .containsEntry("new-b", "more work lost than another candidate's");
    }

    @Test
    void amongTheNewestCardsTheNodeOfTheJobsOtherWorkerWinsOverLessWorkLost() {
        // The second worker of an 8-GPU ps/worker job: the first runs on new-b.
        var pod = TestPods.priority(TestPods.gpus(4), 1000, PriorityHint.UNSET, GpuPreference.UNSET);
        var nearby = new PlacementContext(List.of(new PeerLocation("worker-0", "new-b", "", "")), List.of());
        var verdict = PreemptionStep.judge(policy, pod, ClosedTier.NONE, nearby, List.of(
                new PreemptionStep.Proposal("old", TestNodes.gpu("old", TestTopologies::k80x4, 0, 1, 2, 3), 10),
                new PreemptionStep.Proposal("new-a", TestNodes.gpu("new-a", TestTopologies::dgx1V100, 0, 1, 2, 3), 3_600),
                new PreemptionStep.Proposal("new-b", TestNodes.gpu("new-b", TestTopologies::dgx1V100, 4, 5, 6, 7), 7_200)));

        assertThat(verdict.kept()).containsExactly("new-b");
        assertThat(verdict.refused()).containsEntry("old", "older cards than another candidate's")
                .containsEntry("new-a", "farther from the job's other pods than another candidate");
    }

    @Test
    void theFirstWorkerOfAGangEvictsWhereFurtherEvictionsCanMakeRoomForTheSecond() {
        // An urgent 8-GPU ps/worker job on a full cluster: its second 4-GPU worker waits in the queue. On "crowded" the
        // other four V100 run pods of the worker's own priority, which nothing can evict; on "roomy" they run
        // low-priority pods, and the second worker's preemption can take them.
        var pod = TestPods.priority(TestPods.gpus(4), 1000, PriorityHint.UNSET, GpuPreference.UNSET);
        var secondWaits = new PlacementContext(List.of(), List.of(), List.of(new WaitingPeer("worker-1", 4)));
        var crowdedAfter = TestNodes.gpu("crowded", TestTopologies::dgx1V100, 0, 1, 2, 3);
        var roomyAfter = TestNodes.gpu("roomy", TestTopologies::dgx1V100, 0, 1, 2, 3);
        var roomyReachable = TestNodes.gpu("roomy", TestTopologies::dgx1V100, 0, 1, 2, 3, 4, 5, 6, 7);
        var verdict = PreemptionStep.judge(policy, pod, ClosedTier.NONE, secondWaits, List.of(
                new PreemptionStep.Proposal("crowded", crowdedAfter, crowdedAfter, 3_600, 0),
                new PreemptionStep.Proposal("roomy", roomyAfter, roomyReachable, 7_200, 0)));

        assertThat(verdict.kept()).containsExactly("roomy");
        assertThat(verdict.refused()).containsEntry("crowded", "farther from the job's other pods than another candidate");

        // Without a pod waiting, room counts for nothing: the least work lost decides.
        var alone = PreemptionStep.judge(policy, pod, ClosedTier.NONE, PlacementContext.EMPTY, List.of(
                new PreemptionStep.Proposal("crowded", crowdedAfter, crowdedAfter, 3_600, 0),
                new PreemptionStep.Proposal("roomy", roomyAfter, roomyReachable, 7_200, 0)));
        assertThat(alone.kept()).containsExactly("crowded");
    }

    @Test
    void aOneGpuUrgentPodEvictsBesideUrgentPodsAndSaysWhyNotOnTheWholeNode() {
        var pod = TestPods.priority(TestPods.gpus(1), 1000, PriorityHint.UNSET, GpuPreference.UNSET);
        // "whole": every other GPU runs low-priority work; "beside": positions 1-7 run pods of the pod's own priority.
        var wholeAfter = TestNodes.gpu("whole", TestTopologies::dgx1V100, 0);
        var wholeReachable = TestNodes.gpu("whole", TestTopologies::dgx1V100, 0, 1, 2, 3, 4, 5, 6, 7);
        var beside = TestNodes.gpu("beside", TestTopologies::dgx1V100, 0);
        var verdict = PreemptionStep.judge(policy, pod, ClosedTier.NONE, PlacementContext.EMPTY, List.of(
                new PreemptionStep.Proposal("whole", wholeAfter, wholeReachable, 1_000, 0),
                new PreemptionStep.Proposal("beside", beside, beside, 1_300, 0)));

        assertThat(verdict.kept()).containsExactly("beside");
        assertThat(verdict.refused()).containsEntry("whole",
                "fewer GPUs held by pods it cannot evict than another candidate (urgent pods are gathered, keeping other nodes whole)");
    }

    @Test
    void aNodeWhoseFreedGpusDoNotServeThePodIsRefusedAndAnUnknownNodeIsLeftToKubeScheduler() {
        var pod = TestPods.nvlink(TestPods.priority(TestPods.gpus(4), 1000, PriorityHint.UNSET, GpuPreference.UNSET));
        var verdict = PreemptionStep.judge(policy, pod, ClosedTier.NONE, PlacementContext.EMPTY, List.of(
                new PreemptionStep.Proposal("too-few", TestNodes.gpu("too-few", TestTopologies::dgx1V100, 0, 1), 0),
                new PreemptionStep.Proposal("unknown", null, 0)));

        assertThat(verdict.kept()).containsExactly("unknown");
        assertThat(verdict.refused().get("too-few")).startsWith("evicting its victims would leave");
    }
}
