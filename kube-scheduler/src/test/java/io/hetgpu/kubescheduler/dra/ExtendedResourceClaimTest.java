package io.hetgpu.kubescheduler.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim.Container;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim.DoesNotFit;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim.Mapping;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim.Needed;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim.NotNeeded;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ExtendedResourceClaimTest {

    private static final DeviceClass GPU = new DeviceClass("gpu.nvidia.com", List.of("device.driver == 'gpu.nvidia.com'"),
            Optional.of("nvidia.com/gpu"));
    private static final Map<String, BigDecimal> DRA_NODE = Map.of("cpu", BigDecimal.TEN, "memory", BigDecimal.valueOf(1L << 36));
    private static final Map<String, BigDecimal> PLUGIN_NODE = Map.of("cpu", BigDecimal.TEN, "nvidia.com/gpu", BigDecimal.valueOf(8));

    private static Container container(String name, long gpus) {
        return new Container(name, false, false, Map.of("cpu", BigDecimal.ONE, "memory", BigDecimal.valueOf(1L << 30),
                "nvidia.com/gpu", BigDecimal.valueOf(gpus)));
    }

    private static Map<String, BigDecimal> pod(long gpus) {
        return Map.of("cpu", BigDecimal.ONE, "nvidia.com/gpu", BigDecimal.valueOf(gpus));
    }

    @Test
    void aPlainGpuRequestOnADraNodeBecomesOneRequestPerContainer() {
        var outcome = ExtendedResourceClaim.forNode("team-a", List.of(container("main", 2), container("side", 1)), pod(3), DRA_NODE, List.of(GPU));
        assertThat(outcome).isInstanceOf(Needed.class);
        var needed = (Needed) outcome;
        // cpu, memory, nvidia.com/gpu sorted: the GPU is each container's request 2.
        assertThat(needed.claim().requests()).containsExactly(
                new DeviceRequest.Exactly("container-0-request-2", ExactRequest.count("gpu.nvidia.com", 2)),
                new DeviceRequest.Exactly("container-1-request-2", ExactRequest.count("gpu.nvidia.com", 1)));
        assertThat(needed.claim().name()).isEqualTo(ExtendedResourceClaim.IN_MEMORY_NAME);
        assertThat(needed.mappings()).containsExactly(new Mapping("main", "nvidia.com/gpu", "container-0-request-2"),
                new Mapping("side", "nvidia.com/gpu", "container-1-request-2"));
    }

    @Test
    void aNodeWhoseDevicePluginAdvertisesTheResourceNeedsNoClaim() {
        assertThat(ExtendedResourceClaim.forNode("team-a", List.of(container("main", 2)), pod(2), PLUGIN_NODE, List.of(GPU)))
                .isEqualTo(new NotNeeded());
    }

    @Test
    void withoutAClassANodeThatLacksTheResourceDoesNotFit() {
        assertThat(ExtendedResourceClaim.forNode("team-a", List.of(container("main", 2)), pod(2), DRA_NODE, List.of()))
                .isInstanceOfSatisfying(DoesNotFit.class, d -> assertThat(d.reason()).contains("\"nvidia.com/gpu\""));
    }

    @Test
    void theImplicitNameOfAClassServesToo() {
        var implicit = new DeviceClass("gpu.example.com", List.of());
        var resource = "deviceclass.resource.kubernetes.io/gpu.example.com";
        var c = new Container("main", false, false, Map.of(resource, BigDecimal.ONE));
        var outcome = ExtendedResourceClaim.forNode("team-a", List.of(c), Map.of(resource, BigDecimal.ONE), DRA_NODE, List.of(implicit));
        assertThat(((Needed) outcome).claim().requests()).containsExactly(
                new DeviceRequest.Exactly("container-0-request-0", ExactRequest.count("gpu.example.com", 1)));
    }

    @Test
    void anInitContainerReusesTheRequestsOfTheContainersAfterIt() {
        var init = new Container("warmup", true, false, Map.of("nvidia.com/gpu", BigDecimal.valueOf(3)));
        var outcome = (Needed) ExtendedResourceClaim.forNode("team-a", List.of(init, container("main", 2)), pod(3), DRA_NODE, List.of(GPU));
        // main's two are reused; the init container asks for the third itself.
        assertThat(outcome.claim().requests()).containsExactly(
                new DeviceRequest.Exactly("container-0-request-0", ExactRequest.count("gpu.nvidia.com", 1)),
                new DeviceRequest.Exactly("container-1-request-2", ExactRequest.count("gpu.nvidia.com", 2)));
        assertThat(outcome.mappings()).containsExactly(new Mapping("main", "nvidia.com/gpu", "container-1-request-2"),
                new Mapping("warmup", "nvidia.com/gpu", "container-1-request-2"), new Mapping("warmup", "nvidia.com/gpu", "container-0-request-0"));
    }

    @Test
    void onlyTheLargestShortLivedRequestIsKept() {
        var first = new Container("a", true, false, Map.of("nvidia.com/gpu", BigDecimal.ONE));
        var second = new Container("b", true, false, Map.of("nvidia.com/gpu", BigDecimal.valueOf(4)));
        var outcome = (Needed) ExtendedResourceClaim.forNode("team-a", List.of(first, second), pod(4), DRA_NODE, List.of(GPU));
        assertThat(outcome.claim().requests()).containsExactly(
                new DeviceRequest.Exactly("container-1-request-0", ExactRequest.count("gpu.nvidia.com", 4)));
        assertThat(outcome.mappings()).extracting(Mapping::requestName).containsOnly("container-1-request-0");
    }

    @Test
    void theLatestClassNamingAResourceServesIt() {
        var newer = new DeviceClass("gpu-v2", List.of(), Optional.of("nvidia.com/gpu"));
        assertThat(ExtendedResourceClaim.classFor("nvidia.com/gpu", List.of(GPU, newer))).contains(newer);
    }

    @Test
    void nativeResourcesAreNeverExtended() {
        assertThat(ExtendedResourceClaim.isExtendedResourceName("cpu")).isFalse();
        assertThat(ExtendedResourceClaim.isExtendedResourceName("kubernetes.io/something")).isFalse();
        assertThat(ExtendedResourceClaim.isExtendedResourceName("requests.nvidia.com/gpu")).isFalse();
        assertThat(ExtendedResourceClaim.isExtendedResourceName("nvidia.com/gpu")).isTrue();
    }

    @Test
    void theClaimItMakesIsAllocatedByTheAllocator() {
        var needed = (Needed) ExtendedResourceClaim.forNode("team-a", List.of(container("main", 2)), pod(2), DRA_NODE, List.of(GPU));
        var allocator = new StructuredAllocator(DraLimits.DEFAULTS);
        var outcome = allocator.allocate("node-a", List.of(NvidiaSlices.slice("node-a", NvidiaSlices.h100(0, "r"), NvidiaSlices.h100(1, "r"))),
                Map.of(GPU.name(), GPU), java.util.Set.of(), List.of(needed.claim()));
        assertThat(outcome).isInstanceOfSatisfying(AllocationOutcome.Allocated.class,
                a -> assertThat(a.claims().get(0).results()).extracting(ClaimAllocation.Result::device).containsExactly("gpu-0", "gpu-1"));
    }
}
