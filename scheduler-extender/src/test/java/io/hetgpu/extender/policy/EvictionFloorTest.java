package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A K80 server with free cards and a DGX-1 whose V100s are all held by low-priority pods: what a high-priority pod
 * refuses so that kube-scheduler preempts for the V100s instead.
 */
class EvictionFloorTest {

    private final NodeState freeK80 = TestNodes.gpu("k80", TestTopologies::k80x4);
    /** The DGX-1 as it is (no GPU free) and as preemption could make it (every GPU free). */
    private final NodeState fullV100 = TestNodes.gpu("v100", TestTopologies::dgx1V100, new int[0]);
    private final NodeState reachableV100 = TestNodes.gpu("v100", TestTopologies::dgx1V100);

    private static PodRequest pod(int priority) {
        return TestPods.priority(TestPods.gpus(1), priority, PriorityHint.UNSET, GpuPreference.UNSET);
    }

    private static PlacementPolicy policy(double share, WorkloadThroughputs throughputs) {
        return new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(throughputs).withEvictionFloor(new EvictionFloor(share)));
    }

    @Test
    void anUrgentPodRefusesFreeOldCardsWhilePreemptionCanFreeNewerOnesAndTheReasonIsRetryable() {
        var policy = policy(0.8, WorkloadThroughputs.NONE);
        var closed = policy.evictionFloor(pod(1000), () -> List.of(freeK80, reachableV100));

        assertThat(closed).isNotEqualTo(ClosedTier.NONE);
        var onK80 = policy.assess(pod(1000), freeK80, closed);
        assertThat(onK80).isInstanceOfSatisfying(PlacementPolicy.Misfit.class, misfit -> {
            assertThat(misfit.rejection().reason()).startsWith("faster cards are free, or preemption can free them, for this high-priority pod");
            // Retryable (Unschedulable, not UnschedulableAndUnresolvable): kube-scheduler's preemption considers the node.
            assertThat(misfit.rejection().unresolvable()).isFalse();
        });
        assertThat(policy.assess(pod(1000), reachableV100, closed)).isInstanceOf(PlacementPolicy.Fit.class);
    }

    @Test
    void nothingIsClosedWhenPreemptionFreesNothingBetterForOrdinaryPodsOrWhenOff() {
        var policy = policy(0.8, WorkloadThroughputs.NONE);
        // Nothing better to free: the V100s are held by pods the urgent one cannot evict, so only the K80s are reachable.
        var closed = policy.evictionFloor(pod(1000), () -> List.of(freeK80, fullV100));
        assertThat(policy.assess(pod(1000), freeK80, closed)).isInstanceOf(PlacementPolicy.Fit.class);
        assertThat(policy.evictionFloor(pod(0), () -> List.of(freeK80, reachableV100))).isEqualTo(ClosedTier.NONE);
        assertThat(policy(0, WorkloadThroughputs.NONE).evictionFloor(pod(1000), () -> List.of(freeK80, reachableV100))).isEqualTo(ClosedTier.NONE);
    }

    @Test
    void aJobLargerThanTheFasterCardsPreemptionCanFreeIsNotHeldToTheFloor() {
        var policy = policy(0.8, WorkloadThroughputs.NONE);
        var closed = policy.evictionFloor(pod(1000), () -> List.of(freeK80, reachableV100));

        assertThat(closed.openReachable()).as("the DGX-1's 8 V100s; the K80s are closed").isEqualTo(8);
        assertThat(closed.forJobOf(8)).isSameAs(closed);
        // 12 GPUs in all: evicting every V100 pod would still not seat it there, so it takes what is free instead of
        // waiting for good behind a preemption that can find no victims.
        assertThat(closed.forJobOf(12)).isEqualTo(ClosedTier.NONE);
        assertThat(policy.assess(pod(1000), freeK80, closed.forJobOf(12))).isInstanceOf(PlacementPolicy.Fit.class);
    }

    @Test
    void aPodThatMayNotPreemptTakesTheFreeOldCardsRatherThanWaitForTheNewOnesToFreeThemselves() {
        var policy = policy(0.8, WorkloadThroughputs.NONE);
        var urgent = pod(1000);
        var neverPreempts = new PodRequest(urgent.namespace(), urgent.name(), urgent.uid(), urgent.gpuCount(), urgent.cards(),
                urgent.requireNvlink(), urgent.specPriority(), urgent.priorityHint(), urgent.preference(), urgent.job(), urgent.role(),
                urgent.claimNames(), urgent.workload(), false);

        assertThat(policy.evictionFloor(neverPreempts, () -> List.of(freeK80, reachableV100))).isEqualTo(ClosedTier.NONE);
        assertThat(policy.evictionFloor(urgent, () -> List.of(freeK80, reachableV100))).isNotEqualTo(ClosedTier.NONE);
    }

    @Test
    void withAThroughputTableTheWorkloadsOwnSpeedsDecide() {
        // Recommendation runs at 66 % of its K80 speed on a V100: its own best card is the free one.
        var throughputs = new WorkloadThroughputs(Map.of(
                "resnet50", Map.of("K80", 1.81, "V100", 17.99),
                "recommendation", Map.of("K80", 20.05, "V100", 13.28)));
        var policy = policy(0.8, throughputs);
        var resnet = pod(1000).withWorkload("resnet50");
        var recommendation = pod(1000).withWorkload("recommendation");

        assertThat(policy.assess(resnet, freeK80, policy.evictionFloor(resnet, () -> List.of(freeK80, reachableV100))))
                .isInstanceOf(PlacementPolicy.Misfit.class);
        var closedForRecommendation = policy.evictionFloor(recommendation, () -> List.of(freeK80, reachableV100));
        assertThat(policy.assess(recommendation, freeK80, closedForRecommendation)).isInstanceOf(PlacementPolicy.Fit.class);
        assertThat(policy.assess(recommendation, reachableV100, closedForRecommendation)).as("66 %% of its best, below 80 %%")
                .isInstanceOf(PlacementPolicy.Misfit.class);
    }

    @Test
    void theShareIsChecked() {
        assertThatThrownBy(() -> new EvictionFloor(1.5)).hasMessage("evictForFasterCards: expected a share from 0 (off) to 1, got 1.5");
    }
}
