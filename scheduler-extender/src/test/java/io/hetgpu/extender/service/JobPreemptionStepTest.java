package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The pure job preemption rule over plain node states and victims, as the preempt verb and the simulator take it. */
class JobPreemptionStepTest {

    private final JobPlanner planner = new JobPlanner(new PlacementPolicy(PolicySettings.DEFAULTS));

    /** An urgent job of two pods of 4 GPUs. */
    private final JobPlanner.Job urgent = new JobPlanner.Job("ml/u", IntStream.range(0, 2).mapToObj(i -> new PodRequest("ml", "u-" + i,
            "uid-u-" + i, 4, Set.of(), 0, PodRequest.ANY_COMPUTE_CAPABILITY, false, 1000, PriorityHint.UNSET, GpuPreference.UNSET, "u",
            "worker", List.of())).toList(), pod -> PlacementContext.EMPTY, pod -> ClosedTier.NONE);

    private static NodeState fourV100(String name) {
        return TestNodes.placed(TestNodes.gpu(name, node -> TestTopologies.v100Pcie(node, 4)), "r1", "z1");
    }

    private JobPreemptionStep.Answer answer(List<NodeState> nodes, List<JobPreemptionStep.Victim> victims) {
        return JobPreemptionStep.answer(states -> planner.plan(urgent, states, JobPlanner.MemberFit.ANY), nodes, victims, false);
    }

    @Test
    void theCheapestVictimJobThatLetsTheJobStartIsEvictedOnlyWhereThePlanNeedsIt() {
        // n1 is free. n2 is full with x (4 GPUs, 100 GPU-seconds lost); on n3, y holds 2 GPUs (10 lost) beside 2 free ones.
        var nodes = List.of(fourV100("n1"), fourV100("n2").withTaken(0b1111), fourV100("n3").withTaken(0b0011));
        var victims = List.of(new JobPreemptionStep.Victim("x", "n2", "", 4, 0b1111, 100), new JobPreemptionStep.Victim("y", "n3", "", 2, 0b0011, 10));

        var answer = answer(nodes, victims);

        // y alone frees a second node of 4: the job's other pod takes n1, which needs nothing evicted.
        assertThat(answer).isEqualTo(new JobPreemptionStep.Evict(Map.of("n3", List.of("y")), 10));
    }

    @Test
    void aVictimJobIsEvictedWholeAndCostsAllItsPodsWork() {
        // Job v holds n1 and n2 with one pod each (60 GPU-seconds lost each); a lone pod s on n3 would lose 100. s alone
        // frees one node only; v, evicted whole, frees two.
        var nodes = List.of(fourV100("n1").withTaken(0b1111), fourV100("n2").withTaken(0b1111), fourV100("n3").withTaken(0b1111));
        var victims = List.of(new JobPreemptionStep.Victim("v-0", "n1", "ml/v", 4, 0b1111, 60),
                new JobPreemptionStep.Victim("v-1", "n2", "ml/v", 4, 0b1111, 60), new JobPreemptionStep.Victim("s", "n3", "", 4, 0b1111, 100));

        var answer = (JobPreemptionStep.Evict) answer(nodes, victims);

        // v alone lets both pods start: 120 GPU-seconds lost, less than v and s together (220).
        assertThat(answer.victimsByNode()).isEqualTo(Map.of("n1", List.of("v-0"), "n2", List.of("v-1")));
        assertThat(answer.gpuSecondsLost()).isEqualTo(120);
    }

    @Test
    void forAJobThatWantsTheNewestCardsAPlanOnNewerCardsWinsOverLessWorkLost() {
        // A DGX A100 held by x (300 GPU-seconds), a DGX-1 V100 held by d (100): either alone holds the whole job.
        var a100 = TestNodes.placed(TestNodes.gpu("a100", TestTopologies::dgxA100), "r1", "z1").withTaken(0xFF);
        var v100 = TestNodes.placed(TestNodes.gpu("v100", TestTopologies::dgx1V100), "r1", "z1").withTaken(0xFF);
        var victims = List.of(new JobPreemptionStep.Victim("x", "a100", "", 8, 0xFF, 300), new JobPreemptionStep.Victim("d", "v100", "", 8, 0xFF, 100));

        var newest = (JobPreemptionStep.Evict) JobPreemptionStep.answer(states -> planner.plan(urgent, states, JobPlanner.MemberFit.ANY),
                List.of(a100, v100), victims, true);
        var anyCards = (JobPreemptionStep.Evict) answer(List.of(a100, v100), victims);

        assertThat(newest.victimsByNode()).isEqualTo(Map.of("a100", List.of("x")));
        assertThat(anyCards.victimsByNode()).isEqualTo(Map.of("v100", List.of("d")));
    }

    @Test
    void aPlanOnOneNodeWinsOverTwoThatLoseLess() {
        // a and b (100 GPU-seconds each) free two 4-V100 nodes; d (300) frees a DGX-1 that holds the whole job.
        var dgx = TestNodes.placed(TestNodes.gpu("dgx", TestTopologies::dgx1V100), "r1", "z1").withTaken(0xFF);
        var nodes = List.of(fourV100("n1").withTaken(0b1111), fourV100("n2").withTaken(0b1111), dgx);
        var victims = List.of(new JobPreemptionStep.Victim("a", "n1", "", 4, 0b1111, 100), new JobPreemptionStep.Victim("b", "n2", "", 4, 0b1111, 100),
                new JobPreemptionStep.Victim("d", "dgx", "", 8, 0xFF, 300));

        var answer = (JobPreemptionStep.Evict) answer(nodes, victims);

        assertThat(answer).isEqualTo(new JobPreemptionStep.Evict(Map.of("dgx", List.of("d")), 300));
    }

    @Test
    void nothingIsEvictedForAJobThatFitsOrThatWouldNotFitEvenSo() {
        var free = List.of(fourV100("n1"), fourV100("n2"));
        var tooSmall = List.of(fourV100("n1"), fourV100("n2").withTaken(0b0001));
        // The pod on n2 may not be evicted (it is not among the victims): one node of 4 is all the job can ever have.

        assertThat(answer(free, List.of())).isEqualTo(new JobPreemptionStep.Nothing(JobPreemptionStep.FITS));
        assertThat(answer(tooSmall, List.of())).isEqualTo(new JobPreemptionStep.Nothing(JobPreemptionStep.NEVER_FITS));
    }
}
