package io.hetgpu.kubescheduler.dra;

import static io.hetgpu.kubescheduler.dra.NvidiaSlices.a100;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.classes;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.h100;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.slice;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.t4;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.kubescheduler.dra.DeviceRequest.Exactly;
import io.hetgpu.kubescheduler.dra.DeviceRequest.FirstAvailable;
import io.hetgpu.kubescheduler.dra.DeviceRequest.SubRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PrioritizedListScoreTest {

    private static final String CLASS = NvidiaSlices.GPU_CLASS.name();
    private static final String PRODUCT = "device.attributes['gpu.nvidia.com'].productName == '%s'";

    private final StructuredAllocator allocator = new StructuredAllocator(DraLimits.DEFAULTS);

    /** H100 first, then A100, then T4: the claim a high-priority pod would make. */
    private static Claim newestFirst() {
        return new Claim("team-a", "c", List.of(new FirstAvailable("gpu", newestFirstAlternatives())));
    }

    private static List<SubRequest> newestFirstAlternatives() {
        return List.of(
                new SubRequest("h100", ExactRequest.count(CLASS, 1, PRODUCT.formatted("NVIDIA H100 80GB HBM3"))),
                new SubRequest("a100", ExactRequest.count(CLASS, 1, PRODUCT.formatted("NVIDIA A100-SXM4-40GB"))),
                new SubRequest("t4", ExactRequest.count(CLASS, 1, PRODUCT.formatted("Tesla T4"))));
    }

    private long scoreOn(String node, List<ResourceSlice> slices, Claim claim) {
        var outcome = allocator.allocate(node, slices, classes(), Set.of(), List.of(claim));
        assertThat(outcome).isInstanceOf(AllocationOutcome.Allocated.class);
        return PrioritizedListScore.raw(List.of(claim), ((AllocationOutcome.Allocated) outcome).claims());
    }

    @Test
    void aNodeEarnsEightLessTheIndexOfTheAlternativeItsAllocationTook() {
        var claim = newestFirst();
        assertThat(scoreOn("h", List.of(slice("h", h100(0, "r0"))), claim)).isEqualTo(8);
        assertThat(scoreOn("a", List.of(slice("a", a100(0, "r0"))), claim)).isEqualTo(7);
        assertThat(scoreOn("t", List.of(slice("t", t4(0))), claim)).isEqualTo(6);
    }

    @Test
    void exactRequestsEarnNothingAndEachPrioritizedRequestCounts() {
        var plain = new Claim("team-a", "plain", List.of(new Exactly("gpu", ExactRequest.count(CLASS, 1))));
        assertThat(scoreOn("h", List.of(slice("h", h100(0, "r0"))), plain)).isZero();
        var two = new Claim("team-a", "two", List.of(
                new FirstAvailable("first", newestFirstAlternatives()),
                new FirstAvailable("second", List.of(
                        new SubRequest("h100", ExactRequest.count(CLASS, 1, PRODUCT.formatted("NVIDIA H100 80GB HBM3"))),
                        new SubRequest("a100", ExactRequest.count(CLASS, 1, PRODUCT.formatted("NVIDIA A100-SXM4-40GB")))))));
        // One H100 and one A100: the first request takes the H100 (8), the second is left the A100 (7).
        assertThat(scoreOn("m", List.of(slice("m", h100(0, "r0"), a100(1, "r0"))), two)).isEqualTo(15);
    }

    @Test
    void normalizingGivesTheBestNodeAHundredAndTheOthersTheirShare() {
        var raw = new LinkedHashMap<String, Long>();
        raw.put("h", 8L);
        raw.put("a", 7L);
        raw.put("t", 6L);
        raw.put("cpu", 0L);
        assertThat(PrioritizedListScore.normalized(raw)).containsExactly(Map.entry("h", 100L), Map.entry("a", 87L), Map.entry("t", 75L),
                Map.entry("cpu", 0L));
        assertThat(PrioritizedListScore.normalized(Map.of("x", 0L, "y", 0L))).containsOnly(Map.entry("x", 0L), Map.entry("y", 0L));
    }

    @Test
    void claimsAndAllocationsMustPair() {
        assertThatThrownBy(() -> PrioritizedListScore.raw(List.of(newestFirst()), List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
