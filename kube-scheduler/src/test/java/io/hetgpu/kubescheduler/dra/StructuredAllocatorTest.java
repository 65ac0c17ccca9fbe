package io.hetgpu.kubescheduler.dra;

import static io.hetgpu.kubescheduler.dra.NvidiaSlices.a100;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.classes;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.h100;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.slice;
import static io.hetgpu.kubescheduler.dra.NvidiaSlices.t4;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.dra.AllocationOutcome.Allocated;
import io.hetgpu.kubescheduler.dra.AllocationOutcome.Unallocatable;
import io.hetgpu.kubescheduler.dra.DeviceRequest.Exactly;
import io.hetgpu.kubescheduler.dra.DeviceRequest.FirstAvailable;
import io.hetgpu.kubescheduler.dra.DeviceRequest.SubRequest;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StructuredAllocatorTest {

    private static final String NODE = "node-a";
    private static final String H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'";
    private static final String HOPPER_OR_NEWER = "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0";

    private final StructuredAllocator allocator = new StructuredAllocator(DraLimits.DEFAULTS);

    private static Claim claim(String name, DeviceRequest... requests) {
        return new Claim("team-a", name, List.of(requests));
    }

    private static Exactly gpus(String name, int count, String... selectors) {
        return new Exactly(name, ExactRequest.count(NvidiaSlices.GPU_CLASS.name(), count, selectors));
    }

    private AllocationOutcome allocate(List<ResourceSlice> slices, Set<DeviceId> allocated, Claim... claims) {
        return allocator.allocate(NODE, slices, classes(), allocated, List.of(claims));
    }

    private static List<String> devices(AllocationOutcome outcome) {
        assertThat(outcome).isInstanceOf(Allocated.class);
        return ((Allocated) outcome).claims().stream().flatMap(c -> c.results().stream()).map(r -> r.request() + "=" + r.device()).toList();
    }

    private static String reason(AllocationOutcome outcome) {
        assertThat(outcome).isInstanceOf(Unallocatable.class);
        return ((Unallocatable) outcome).reason();
    }

    private static DeviceId id(String device) {
        return new DeviceId(NvidiaSlices.DRIVER, NODE, device);
    }

    @Test
    void firstFitTakesDevicesInTheirOrder() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r0"), a100(2, "r1"))), Set.of(), claim("c", gpus("gpu", 2)));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-0", "gpu=gpu-1");
        var allocation = ((Allocated) outcome).claims().get(0);
        assertThat(allocation.nodeName()).contains(NODE);
        assertThat(allocation.results().get(0).driver()).isEqualTo("gpu.nvidia.com");
        assertThat(allocation.results().get(0).pool()).isEqualTo(NODE);
    }

    @Test
    void devicesAllocatedToOtherClaimsAreSkipped() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r0"), a100(2, "r1"))), Set.of(id("gpu-0"), id("gpu-2")),
                claim("c", gpus("gpu", 1)));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-1");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(id("gpu-0")), claim("c", gpus("gpu", 1)))))
                .isEqualTo("cannot allocate all claims: team-a/c");
    }

    @Test
    void requestSelectorsNarrowTheClass() {
        var outcome = allocate(List.of(slice(NODE, t4(0), a100(1, "r0"), h100(2, "r1"), h100(3, "r1"))), Set.of(),
                claim("c", gpus("gpu", 2, HOPPER_OR_NEWER)));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-2", "gpu=gpu-3");
        assertThat(reason(allocate(List.of(slice(NODE, t4(0), a100(1, "r0"))), Set.of(), claim("c", gpus("gpu", 1, H100)))))
                .startsWith("cannot allocate");
    }

    @Test
    void theClassSelectorsApplyToo() {
        var classes = classes(new DeviceClass("big-gpu", List.of("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0")));
        var outcome = allocator.allocate(NODE, List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"))), classes, Set.of(),
                List.of(claim("c", new Exactly("gpu", ExactRequest.count("big-gpu", 1)))));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-1");
    }

    @Test
    void severalClaimsNeverShareADevice() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r0"), a100(2, "r0"))), Set.of(),
                claim("one", gpus("gpu", 1)), claim("two", gpus("gpu", 2)));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-0", "gpu=gpu-1", "gpu=gpu-2");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r0"))), Set.of(),
                claim("one", gpus("gpu", 1)), claim("two", gpus("gpu", 2))))).isEqualTo("cannot allocate all claims: team-a/one, team-a/two");
    }

    @Test
    void allocationModeAllTakesEveryMatchingDevice() {
        var all = new Exactly("all", ExactRequest.all(NvidiaSlices.GPU_CLASS.name(), H100));
        var slices = List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"), h100(2, "r1")));
        assertThat(devices(allocate(slices, Set.of(), claim("c", all)))).containsExactly("all=gpu-1", "all=gpu-2");
        assertThat(reason(allocate(slices, Set.of(id("gpu-2")), claim("c", all)))).startsWith("cannot allocate");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", all)))).startsWith("cannot allocate");
    }

    @Test
    void firstAvailableTakesTheFirstAlternativeThatFits() {
        var prioritized = new FirstAvailable("gpu", List.of(
                new SubRequest("h100s", ExactRequest.count("gpu.nvidia.com", 2, H100)),
                new SubRequest("anything", ExactRequest.count("gpu.nvidia.com", 1))));
        assertThat(devices(allocate(List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"), h100(2, "r0"))), Set.of(), claim("c", prioritized))))
                .containsExactly("gpu/h100s=gpu-1", "gpu/h100s=gpu-2");
        assertThat(devices(allocate(List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"))), Set.of(), claim("c", prioritized))))
                .containsExactly("gpu/anything=gpu-0");
    }

    @Test
    void aLaterRequestThatCannotBeMetMovesAnEarlierAlternative() {
        // The first alternative fits alone but leaves nothing for the second request; the search backs up.
        var prioritized = new FirstAvailable("first", List.of(
                new SubRequest("h100", ExactRequest.count("gpu.nvidia.com", 1, H100)),
                new SubRequest("any", ExactRequest.count("gpu.nvidia.com", 1))));
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"))), Set.of(), claim("c", prioritized, gpus("second", 1, H100)));
        assertThat(devices(outcome)).containsExactly("first/any=gpu-0", "second=gpu-1");
    }

    @Test
    void matchAttributeKeepsRequestsOnOneValueBackingUpWhenNeeded() {
        var sameRoot = new MatchAttribute(List.of(), "resource.kubernetes.io/pcieRoot");
        var claim = new Claim("team-a", "c", List.of(gpus("a", 1), gpus("b", 2)), List.of(sameRoot));
        // gpu-0 alone on r0: the first try for "a" leaves "b" without two on r0, so "a" moves to r1.
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r1"), a100(2, "r1"), a100(3, "r1"))), Set.of(), claim);
        assertThat(devices(outcome)).containsExactly("a=gpu-1", "b=gpu-2", "b=gpu-3");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"), a100(1, "r1"), a100(2, "r2"))), Set.of(), claim))).startsWith("cannot allocate");
    }

    @Test
    void matchAttributeNamesRequestsAndTheDriversDomain() {
        var sameProduct = new MatchAttribute(List.of("a", "b"), "gpu.nvidia.com/productName");
        var claim = new Claim("team-a", "c", List.of(gpus("a", 1), gpus("b", 1), gpus("free", 1)), List.of(sameProduct));
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"), h100(1, "r0"), h100(2, "r0"))), Set.of(), claim);
        // "a" takes the A100 first, but then "b" finds no second A100: both move to the H100s, "free" takes what is left.
        assertThat(devices(outcome)).containsExactly("a=gpu-1", "b=gpu-2", "free=gpu-0");
    }

    @Test
    void aDeviceWithoutTheMatchedAttributeIsNotTaken() {
        var bare = new Device("bare-0", Map.of(), Map.of());
        var claim = new Claim("team-a", "c", List.of(gpus("a", 1)), List.of(new MatchAttribute(List.of(), "gpu.nvidia.com/productName")));
        assertThat(devices(allocate(List.of(slice(NODE, bare, a100(1, "r0"))), Set.of(), claim))).containsExactly("a=gpu-1");
    }

    @Test
    void slicesOfOtherNodesAreOutOfReachAndNetworkDevicesTieNoNode() {
        var other = slice("node-b", h100(0, "r0"));
        assertThat(reason(allocate(List.of(other), Set.of(), claim("c", gpus("gpu", 1))))).startsWith("cannot allocate");
        var shared = new ResourceSlice("fabric", "gpu.nvidia.com", "fabric", 1, 1, "", true, List.of(h100(7, "r9")));
        var outcome = allocate(List.of(other, shared), Set.of(), claim("c", gpus("gpu", 1)));
        assertThat(devices(outcome)).containsExactly("gpu=gpu-7");
        assertThat(((Allocated) outcome).claims().get(0).nodeName()).isEmpty();
    }

    @Test
    void onlyTheNewestGenerationOfAPoolCountsAndAnIncompletePoolIsSkipped() {
        var old = new ResourceSlice("s-old", "gpu.nvidia.com", NODE, 1, 1, NODE, false, List.of(h100(0, "r0")));
        var fresh = new ResourceSlice("s-new", "gpu.nvidia.com", NODE, 2, 1, NODE, false, List.of(a100(5, "r0")));
        assertThat(devices(allocate(List.of(old, fresh), Set.of(), claim("c", gpus("gpu", 1))))).containsExactly("gpu=gpu-5");
        var half = new ResourceSlice("s-half", "gpu.nvidia.com", NODE, 3, 2, NODE, false, List.of(h100(0, "r0")));
        assertThat(reason(allocate(List.of(half), Set.of(), claim("c", gpus("gpu", 1))))).startsWith("cannot allocate");
        assertThat(reason(allocate(List.of(half), Set.of(), claim("c", new Exactly("all", ExactRequest.all("gpu.nvidia.com"))))))
                .contains("is currently being updated");
    }

    @Test
    void aPoolThatNamesADeviceTwiceIsInvalid() {
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"), h100(0, "r0"))), Set.of(), claim("c", gpus("gpu", 3)))))
                .isEqualTo("resource pool gpu.nvidia.com/node-a is invalid: duplicate device name \"gpu-0\"");
    }

    @Test
    void anUnknownClassIsAReason() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", new Exactly("gpu", ExactRequest.count("nope", 1))));
        assertThat(reason(outcome)).isEqualTo("claim team-a/c, request \"gpu\": could not retrieve device class \"nope\"");
    }

    @Test
    void aSelectorThatDoesNotCompileIsAReasonNamingItsOwner() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", gpus("gpu", 1, "device.attributes[")));
        assertThat(reason(outcome)).startsWith("claim team-a/c: selector #0: CEL compile error");
        var broken = classes(new DeviceClass("broken", List.of("device.driver ==")));
        var viaClass = allocator.allocate(NODE, List.of(slice(NODE, a100(0, "r0"))), broken, Set.of(),
                List.of(claim("c", new Exactly("gpu", ExactRequest.count("broken", 1)))));
        assertThat(reason(viaClass)).startsWith("class \"broken\": selector #0: CEL compile error");
    }

    @Test
    void aSelectorThatFailsOnADeviceStopsTheNode() {
        var outcome = allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(),
                claim("c", gpus("gpu", 1, "device.attributes['gpu.nvidia.com'].migProfile == '1g'")));
        assertThat(reason(outcome)).startsWith("claim team-a/c: selector #0 on device gpu.nvidia.com/node-a/gpu-0: CEL runtime error");
    }

    @Test
    void aSelectorThatCostsTooMuchStopsTheNode() {
        var cheap = new StructuredAllocator(DraLimits.DEFAULTS.withMaxSelectorCost(20));
        var costly = "[1,2,3,4,5,6,7,8,9,10].all(x, x > 0)";
        var outcome = cheap.allocate(NODE, List.of(slice(NODE, a100(0, "r0"))), classes(), Set.of(), List.of(claim("c", gpus("gpu", 1, costly))));
        assertThat(reason(outcome)).endsWith("CEL cost limit of 20 exceeded");
    }

    @Test
    void theSearchIsBoundedByConfiguration() {
        // Ten A100s, six of them asked for, then one H100 that is not there: every ordering of the six is tried before
        // the search could say no, far more than the bound.
        var devices = new Device[10];
        for (int i = 0; i < devices.length; i++) {
            devices[i] = a100(i, "r0");
        }
        var bounded = new StructuredAllocator(DraLimits.DEFAULTS.withMaxSearchSteps(1_000));
        var outcome = bounded.allocate(NODE, List.of(slice(NODE, devices)), classes(), Set.of(),
                List.of(claim("c", gpus("gpu", 6)), claim("d", gpus("x", 1, H100))));
        assertThat(reason(outcome)).isEqualTo("search bound of 1000 devices tried reached for team-a/c, team-a/d");
    }

    @Test
    void countsBeyondTheClaimLimitAreRefusedUpFront() {
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", gpus("gpu", 33)))))
                .contains("count 33 outside 1..32");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", gpus("a", 20), gpus("b", 20)))))
                .isEqualTo("claim team-a/c: number of requested devices 40 exceeds the claim limit of 32");
        assertThat(reason(allocate(List.of(slice(NODE, a100(0, "r0"))), Set.of(), claim("c", gpus("gpu", 0))))).contains("count 0");
    }

    @Test
    void tooManyClaimsOrSelectorsAreRefused() {
        var limits = new DraLimits(1024, 1000, 100, 2, 32, 2, 1000, 16);
        var small = new StructuredAllocator(limits);
        var claims = List.of(claim("a", gpus("g", 1)), claim("b", gpus("g", 1)), claim("c", gpus("g", 1)));
        assertThat(reason(small.allocate(NODE, List.of(), classes(), Set.of(), claims))).isEqualTo("3 claims, more than the limit of 2");
        var manySelectors = claim("a", gpus("g", 1, "true", "true", "true"));
        assertThat(reason(small.allocate(NODE, List.of(), classes(), Set.of(), List.of(manySelectors)))).contains("more selectors than the limit of 2");
    }

    @Test
    void moreRequestsThanAClaimMayHoldDevicesAreRefusedBeforeAnyIsResolved() {
        var requests = new DeviceRequest[40];
        for (int i = 0; i < requests.length; i++) {
            requests[i] = gpus("r" + i, 1);
        }
        assertThat(reason(allocate(List.of(), Set.of(), claim("c", requests))))
                .isEqualTo("claim team-a/c: 40 requests and 0 constraints, more than the limit of 32");
    }

    @Test
    void anEmptyFirstAvailableIsAReason() {
        assertThat(reason(allocate(List.of(), Set.of(), claim("c", new FirstAvailable("gpu", List.of())))))
                .isEqualTo("claim team-a/c, request \"gpu\": firstAvailable lists no subrequest");
    }

    @Test
    void nothingToAllocateIsAnEmptyAllocation() {
        assertThat(allocate(List.of(), Set.of())).isEqualTo(new Allocated(List.of()));
        assertThat(((Allocated) allocate(List.of(), Set.of(), claim("c"))).claims().get(0))
                .isEqualTo(new ClaimAllocation("team-a", "c", List.of(), Optional.empty()));
    }
}
