package io.hetgpu.kubescheduler.score;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Worked by hand from kube-scheduler's leastResourceScorer and balancedResourceScorer. */
class DefaultScoreTest {

    private static final CpuMemory NODE = CpuMemory.of(4, 8);

    @Test
    void anEvenlyQuarterFullNodeScoresSeventyFivePlusAHundred() {
        // LeastAllocated: (4000-1000)*100/4000 = 75 for cpu, 75 for memory; no spread: Balanced 100.
        assertThat(DefaultScore.score(CpuMemory.of(1, 2), NODE)).isEqualTo(175);
    }

    @Test
    void integerDivisionAndATruncatedDeviationAsKubeSchedulerComputesThem() {
        // cpu 50, memory 75: (50+75)/2 = 62; fractions 0.5 and 0.25: deviation 0.125, (1-0.125)*100 = 87.
        assertThat(DefaultScore.leastAllocated(CpuMemory.of(2, 2), NODE)).isEqualTo(62);
        assertThat(DefaultScore.balancedAllocation(CpuMemory.of(2, 2), NODE)).isEqualTo(87);
    }

    @Test
    void overcommittedResourcesScoreZeroAndFractionsAreCappedAtOne() {
        assertThat(DefaultScore.leastAllocated(CpuMemory.of(8, 16), NODE)).isZero();
        assertThat(DefaultScore.balancedAllocation(CpuMemory.of(8, 4), NODE)).isEqualTo(75);
    }

    @Test
    void theEmptierNodeScoresHigherSoPodsSpread() {
        var node = new SchedulingNode("n", false, Map.of(), List.of(),
                Map.of("cpu", BigDecimal.valueOf(4), "memory", BigDecimal.valueOf(8L << 30)));
        var pod = new ResourceRequest(Map.of("cpu", BigDecimal.ONE, "memory", BigDecimal.valueOf(2L << 30)));
        assertThat(DefaultScore.score(pod, node, List.of())).isGreaterThan(DefaultScore.score(pod, node, List.of(pod)));
        assertThat(DefaultScore.score(pod, node, List.of())).isEqualTo(175);
    }
}
