package io.hetgpu.testcluster.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice;
import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import io.hetgpu.testcluster.scheduler.DraObjects;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A simulated node published by hetgpu's DRA driver, read back by the test cluster's allocator model: a claim whose
 * {@code matchAttribute} names an NVLink set gets GPUs of one set, where first fit takes any.
 */
class HetgpuDraNodeTest {

    private static final String NODE = "v100-dra";

    @Test
    void aDraNodeCanBePublishedByEitherDriver() {
        assertThat(NodeSpec.dra(NODE, "r", "z", "dgx1-v100").plugin()).isEqualTo(NodeSpec.GpuPlugin.NVIDIA_DRA);
        var hetgpu = NodeSpec.dra(NODE, "r", "z", "dgx1-v100", NodeSpec.DraDriver.HETGPU);
        assertThat(hetgpu.plugin()).isEqualTo(NodeSpec.GpuPlugin.HETGPU_DRA);
        assertThat(hetgpu.servedByDra()).isTrue();
        assertThat(hetgpu.servedByHetgpu()).isFalse();
    }

    @Test
    void theTestClusterPublishesAHetgpuDraNodesSliceAndTheDriversClass(@TempDir Path dir) throws Exception {
        try (var cluster = TestCluster.start(List.of(NodeSpec.dra(NODE, "r", "z", "dgx1-v100", NodeSpec.DraDriver.HETGPU)), dir, message -> { })) {
            var slice = cluster.client().resources(ResourceSlice.class).withName(NODE + "-gpu.hetgpu.io").get();
            assertThat(slice.getSpec().getDriver()).isEqualTo("gpu.hetgpu.io");
            assertThat(slice.getSpec().getDevices()).hasSize(8);
            assertThat(cluster.client().nodes().withName(NODE).get().getStatus().getAllocatable()).doesNotContainKey("nvidia.com/gpu");
            assertThat(cluster.client().resources(DeviceClass.class).withName(HetgpuDraClass.GPU_CLASS).get()).isNotNull();
        }
    }

    @Test
    void aClaimForAnNvlinkPairOnADgx1GetsAPairWhereFirstFitDoesNot() throws Exception {
        var topology = ProfileLoader.load("dgx1-v100").topology(NODE);
        var slice = HetgpuSlice.of(NODE, topology, CardCatalog.defaults());
        // With GPUs 0-2 taken, first fit hands out 3 and 4, which share no NVLink on a DGX-1 …
        var taken = Set.of("gpu-0", "gpu-1", "gpu-2");
        var firstFit = allocate(slice, null, taken);
        // … while the set constraint finds a linked pair among those left.
        var linked = allocate(slice, "gpu.hetgpu.io/nvlinkSet2", taken);

        assertThat(firstFit).containsExactly("gpu-3", "gpu-4");
        assertThat(topology.links().isNvlink(3, 4)).isFalse();
        assertThat(linked).hasSize(2).doesNotContainAnyElementsOf(taken);
        var pairs = NvlinkSets.of(topology.links(), 2).sets().stream().map(set -> set.positions().stream().map(p -> "gpu-" + p).toList()).toList();
        assertThat(pairs).anySatisfy(pair -> assertThat(pair).containsExactlyInAnyOrderElementsOf(linked));
        assertThat(topology.links().isNvlink(Integer.parseInt(linked.get(0).substring(4)), Integer.parseInt(linked.get(1).substring(4)))).isTrue();
    }

    private static List<String> allocate(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice slice, String matchAttribute,
                                         Set<String> taken) {
        var claim = new ResourceClaimBuilder().withNewMetadata().withName("pair").withNamespace("team").endMetadata()
                .withNewSpec().withNewDevices().withRequests(new DeviceRequestBuilder().withName("gpus").withNewExactly()
                        .withDeviceClassName(HetgpuDraClass.GPU_CLASS).withCount(2L).endExactly().build()).endDevices().endSpec().build();
        if (matchAttribute != null) {
            claim = new ResourceClaimBuilder(claim).editSpec().editDevices().addNewConstraint().withMatchAttribute(matchAttribute)
                    .endConstraint().endDevices().endSpec().build();
        }
        var read = (DraObjects.ClaimReading.Read) DraObjects.claim(claim);
        var sliceRead = DraObjects.slice(slice);
        var allocated = taken.stream().map(name -> new io.hetgpu.kubescheduler.dra.DeviceId(sliceRead.driver(), sliceRead.pool(), name))
                .collect(java.util.stream.Collectors.toSet());
        var outcome = new StructuredAllocator(DraLimits.DEFAULTS).allocate(NODE, List.of(sliceRead),
                DraObjects.classes(List.of(HetgpuDraClass.gpuClass())), allocated, List.of(read.claim()));
        assertThat(outcome).isInstanceOf(AllocationOutcome.Allocated.class);
        return ((AllocationOutcome.Allocated) outcome).claims().get(0).results().stream().map(r -> r.device()).toList();
    }
}
