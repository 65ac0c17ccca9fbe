package io.hetgpu.extender.cluster;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.SliceReader;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Allocated claims hold their devices exactly; a victim's own claims are what its eviction frees. */
class ClaimHoldingsTest {

    private static final String NODE = "a100";
    private final CardCatalog catalog = CardCatalog.defaults();
    private final NodeStateFactory states = new NodeStateFactory(catalog, "rack");
    private final NodeFacts facts = new NodeFacts(NODE, "1", Map.of(), null, null, null, true, SliceReader.read(NODE,
            List.of(slice(NODE, NVIDIA, 1, 1, nvidiaGpus(8, "NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi"))), catalog));

    @Test
    void aClaimReservedForOnePodIsThatPodsHoldingOfExactlyItsDevices() {
        var claim = allocated(claim("ml", "train-gpus", exactly("gpus", NVIDIA, 4)), NODE, NVIDIA, "uid-train", "gpu-0", "gpu-1", "gpu-2", "gpu-3");

        var holdings = ClaimHoldings.of(List.of(claim), uid -> pod(uid, 100));

        assertThat(holdings).singleElement().satisfies(holding -> {
            assertThat(holding.uid()).isEqualTo("uid-train");
            assertThat(holding.gpuCount()).isEqualTo(4);
            assertThat(holding.priority()).isEqualTo(100);
            assertThat(holding.devices()).containsExactly("gpu.nvidia.com/a100/gpu-0", "gpu.nvidia.com/a100/gpu-1",
                    "gpu.nvidia.com/a100/gpu-2", "gpu.nvidia.com/a100/gpu-3");
        });
        var state = states.state(facts, holdings);
        assertThat(state.freeMask()).as("the claim's devices, not a prediction").isEqualTo(0b1111_0000L);
    }

    @Test
    void aVictimsClaimsAreFreedByItsEvictionASharedClaimIsNot() {
        var own = allocated(claim("ml", "own", exactly("gpus", NVIDIA, 2)), NODE, NVIDIA, "uid-low", "gpu-4", "gpu-5");
        var shared = new ResourceClaimBuilder(allocated(claim("ml", "shared", exactly("gpus", NVIDIA, 2)), NODE, NVIDIA, "uid-low", "gpu-6", "gpu-7"))
                .editStatus().addToReservedFor(new ResourceClaimConsumerReferenceBuilder().withResource("pods").withName("other")
                        .withUid("uid-other").build()).endStatus().build();

        var holdings = ClaimHoldings.of(List.of(own, shared), uid -> pod(uid, 0));
        var state = states.state(facts, holdings);

        assertThat(holdings).extracting(BoundPod::uid).containsExactly("uid-low", "claim:claim-shared");
        assertThat(state.freeCount()).isEqualTo(4);
        var freed = DeviceHoldings.heldBy(state.gpus(), holdings, pod -> pod.uid().equals("uid-low"));
        assertThat(freed).as("its own claim only").isEqualTo(0b0011_0000L);
        assertThat(DeviceHoldings.heldBy(state.gpus(), holdings, pod -> pod.priority() < 1_000_000)).as("no priority evicts a shared claim")
                .isEqualTo(0b0011_0000L);
    }

    @Test
    void aClaimWhosePodIsGoneHoldsItsDevicesUntilItsAllocationIsRemoved() {
        var orphan = allocated(claim("ml", "orphan", exactly("gpus", NVIDIA, 1)), NODE, NVIDIA, "uid-gone", "gpu-0");
        var unreserved = allocated(claim("ml", "unreserved", exactly("gpus", NVIDIA, 1)), NODE, NVIDIA, null, "gpu-1");

        var holdings = ClaimHoldings.of(List.of(orphan, unreserved), uid -> null);

        assertThat(holdings).extracting(BoundPod::priority).containsOnly(ClaimHoldings.NOT_EVICTABLE);
        assertThat(states.state(facts, holdings).freeCount()).isEqualTo(6);
    }

    @Test
    void adminAccessAndOtherDriversDevicesHoldNoGpu() {
        var claim = allocated(claim("ml", "mixed", exactly("gpus", NVIDIA, 1)), NODE, NVIDIA, "uid-a", "gpu-0");
        var results = new java.util.ArrayList<>(claim.getStatus().getAllocation().getDevices().getResults());
        results.add(new DeviceRequestAllocationResultBuilder().withRequest("nic").withDriver("rdma.example.com").withPool(NODE).withDevice("eth0").build());
        results.add(new DeviceRequestAllocationResultBuilder().withRequest("watch").withDriver(NVIDIA).withPool(NODE).withDevice("gpu-7")
                .withAdminAccess(true).build());
        var mixed = new ResourceClaimBuilder(claim).editStatus().editAllocation().editDevices().withResults(results).endDevices()
                .endAllocation().endStatus().build();

        assertThat(ClaimHoldings.of(List.of(mixed), uid -> pod(uid, 0))).singleElement()
                .satisfies(holding -> assertThat(holding.devices()).containsExactly("gpu.nvidia.com/a100/gpu-0"));
    }

    @Test
    void aPodsClaimReplacesItsDevicePluginHolding() {
        var predicted = new BoundPod("uid-a", 2, false, Instant.EPOCH);
        var claimed = new BoundPod("uid-a", 2, false, Instant.EPOCH, List.of("gpu.nvidia.com/a100/gpu-0", "gpu.nvidia.com/a100/gpu-1"), 0);
        var other = new BoundPod("uid-b", 1, false, Instant.EPOCH);

        assertThat(ClaimHoldings.merged(List.of(predicted, other), List.of(claimed))).containsExactly(claimed, other);
    }

    @Test
    void theNodeOfAClaimIsItsAllocationsNodeSelectorElseThePoolsNode() {
        var claim = allocated(claim("ml", "c", exactly("gpus", NVIDIA, 1)), NODE, NVIDIA, "uid-a", "gpu-0");
        assertThat(ClaimHoldings.nodesOf(claim, pool -> null)).containsExactly(NODE);
        var withoutSelector = new ResourceClaimBuilder(claim).editStatus().editAllocation().withNodeSelector(null).endAllocation().endStatus().build();
        assertThat(ClaimHoldings.nodesOf(withoutSelector, pool -> pool.get(1).equals(NODE) ? "node-of-pool" : null)).containsExactly("node-of-pool");
    }

    private static Pod pod(String uid, int priority) {
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName("pod-" + uid).withUid(uid)
                .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata().withNewSpec().withPriority(priority).withNodeName(NODE).endSpec().build();
    }
}
