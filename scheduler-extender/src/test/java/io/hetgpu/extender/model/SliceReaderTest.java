package io.hetgpu.extender.model;

import static io.hetgpu.extender.TestDra.HETGPU;
import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.hetgpuGpus;
import static io.hetgpu.extender.TestDra.nvidiaGpu;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SliceReaderTest {

    private final CardCatalog catalog = CardCatalog.defaults();
    private final NodeGpuReader reader = new NodeGpuReader(catalog, "nvidia.com/gpu");

    @Test
    void nvidiasDriverPublishesWholeGpusReadAsTheInventoryWouldName() {
        var slices = SliceReader.read("a100", List.of(slice("a100", NVIDIA, 1, 1,
                nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))), catalog);

        assertThat(slices.gpus()).hasSize(8).allSatisfy(gpu -> {
            assertThat(gpu.model()).isEqualTo("A100");
            assertThat(gpu.memoryMiB()).isEqualTo(40 * 1024);
            assertThat(gpu.computeCapability()).isEqualTo(new ComputeCapability(8, 0));
        });
        assertThat(slices.gpus().getFirst().id()).isEqualTo("gpu.nvidia.com/a100/gpu-0");
        var gpus = reader.read(facts("a100", slices, null));
        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.DraSlices.class);
        assertThat(gpus.source().knowsModel()).isTrue();
        assertThat(gpus.source().knowsNvlink()).as("NVIDIA's driver publishes no NVLink").isFalse();
        assertThat(gpus.summary()).contains("8 A100").contains("from ResourceSlices (gpu.nvidia.com), links unknown");
        assertThat(gpus.tiers()).allSatisfy(tier -> assertThat(tier.rank()).isEqualTo(70));
        assertThat(Long.bitCount(gpus.healthyMask())).isEqualTo(8);
    }

    @Test
    void onlyTheHighestGenerationOfAPoolCounts() {
        var old = slice("old", "n", NVIDIA, "n", 1, 1, nvidiaGpus(8, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));
        var current = slice("new", "n", NVIDIA, "n", 2, 1, nvidiaGpus(4, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));

        assertThat(SliceReader.read("n", List.of(old, current), catalog).gpus()).hasSize(4);
        assertThat(SliceReader.read("n", List.of(current, old), catalog).gpus()).as("whatever order the informer lists them in").hasSize(4);
    }

    @Test
    void anIncompletePoolIsNotCountedAndTheNoteSaysWhy() {
        var half = slice("half", "n", NVIDIA, "n", 3, 2, nvidiaGpus(4, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));

        var slices = SliceReader.read("n", List.of(half), catalog);

        assertThat(slices.gpus()).isEmpty();
        assertThat(slices.notes()).contains("pool \"gpu.nvidia.com/n\" incomplete (1 of 2 slices of generation 3 seen)");
        var whole = slice("other-half", "n", NVIDIA, "n", 3, 2, List.of(nvidiaGpu("gpu-9", "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi")));
        assertThat(SliceReader.read("n", List.of(half, whole), catalog).gpus()).hasSize(5);
    }

    @Test
    void aPoolNamingADeviceTwiceIsInvalid() {
        var one = slice("one", "n", NVIDIA, "n", 1, 2, nvidiaGpus(2, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));
        var two = slice("two", "n", NVIDIA, "n", 1, 2, nvidiaGpus(2, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));

        var slices = SliceReader.read("n", List.of(one, two), catalog);

        assertThat(slices.gpus()).isEmpty();
        assertThat(slices.notes()).contains("invalid (device \"gpu-0\" named twice)");
    }

    @Test
    void moreThanSixtyFourGpusAreRefusedWithAReason() {
        var many = slice("many", "n", NVIDIA, "n", 1, 1, nvidiaGpus(65, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"));

        var slices = SliceReader.read("n", List.of(many), catalog);
        var gpus = reader.read(facts("n", slices, null));

        assertThat(slices.problem()).contains("more than 64 GPUs").contains("at most 64 per node");
        assertThat(gpus.size()).isZero();
        assertThat(gpus.problem()).contains("more than 64 GPUs");
        assertThat(SliceReader.read("n", List.of(slice("max", "n", NVIDIA, "n", 1, 1,
                nvidiaGpus(64, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"))), catalog).gpus()).hasSize(64);
    }

    @Test
    void slicesPastTheBoundAreNotReadOneByOne() {
        var slices = new ArrayList<io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice>();
        for (int i = 0; i <= SliceReader.MAX_SLICES_PER_NODE; i++) {
            slices.add(slice("s" + i, "n", NVIDIA, "pool-" + i, 1, 1, List.of()));
        }
        assertThat(SliceReader.read("n", slices, catalog).problem()).contains("more than 256 ResourceSlices");
    }

    @Test
    void hugeAndOddValuesAreCutOrLeftOutNeverThrown() {
        var huge = "NVIDIA H100 " + "X".repeat(100_000);
        var devices = List.of(
                nvidiaGpu("huge", huge, "Hopper", "9.0.0", "80Gi"),
                nvidiaGpu("no-version", "NVIDIA A100-SXM4-40GB", "Ampere", "eight", "40Gi"),
                withoutCapacity(nvidiaGpu("no-memory", "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi")),
                nvidiaGpu("no-room", "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "0"),
                typed(nvidiaGpu("mig", "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "5Gi"), TestDra.text("mig")),
                typed(nvidiaGpu("int-type", "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"),
                        new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder().withInt(7L).build()));

        var slices = SliceReader.read("n", List.of(slice("odd", "n", NVIDIA, "n", 1, 1, devices)), catalog);

        assertThat(slices.gpus()).extracting(DraDevice::name).containsExactly("huge", "int-type");
        assertThat(slices.gpus().getFirst().product()).hasSize(SliceReader.MAX_VALUE_CHARS);
        assertThat(slices.gpus().getFirst().model()).isEqualTo("H100");
        assertThat(slices.notes()).contains("device \"no-version\" not counted: cudaComputeCapability \"eight\"")
                .contains("device \"no-memory\" not counted: no memory capacity")
                .contains("device \"no-room\" not counted: memory capacity")
                .doesNotContain("mig");
        assertThat(slices.notes().length()).isLessThan(2_000);
    }

    @Test
    void taintedGpusAreThereButNotOffered() {
        var tainted = new DeviceBuilder(nvidiaGpu("gpu-1", "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"))
                .withTaints(new DeviceTaintBuilder().withKey("gpu.nvidia.com/xid").withEffect("NoSchedule").build()).build();
        var slices = SliceReader.read("n", List.of(slice("t", "n", NVIDIA, "n", 1, 1,
                List.of(nvidiaGpu("gpu-0", "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"), tainted))), catalog);

        var gpus = reader.read(facts("n", slices, null));

        assertThat(gpus.size()).isEqualTo(2);
        assertThat(Long.bitCount(gpus.healthyMask())).isEqualTo(1);
        assertThat(slices.notes()).contains("1 tainted");
    }

    @Test
    void hetgpusDriverIsReadByTheSharedContractsNames() {
        var dgx1 = TestTopologies.dgx1V100("dgx1");
        var slices = SliceReader.read("dgx1", List.of(slice("h", "dgx1", HETGPU, "dgx1", 1, 1, hetgpuGpus(dgx1, catalog))), catalog);

        assertThat(slices.gpus()).hasSize(8).allSatisfy(gpu -> {
            assertThat(gpu.model()).isEqualTo("V100");
            assertThat(gpu.memoryMiB()).isEqualTo(16160);
            assertThat(gpu.computeCapability()).isEqualTo(new ComputeCapability(7, 0));
            assertThat(gpu.tier()).isEqualTo(catalog.tierOf("V100", new ComputeCapability(7, 0), 16160).rank());
            assertThat(gpu.nvlinkSets()).as("every GPU of a DGX-1 is in a set of each size").containsOnlyKeys(2, 4, 8);
        });
        assertThat(slices.gpus().get(4).numaNode()).isEqualTo(1);
        assertThat(slices.gpus().getFirst().id()).isEqualTo("gpu.hetgpu.io/dgx1/gpu-0");
        var gpus = reader.read(facts("dgx1", slices, null));
        assertThat(gpus.source().knowsNvlink()).isTrue();
        assertThat(gpus.summary()).contains("8 V100").contains("from ResourceSlices (gpu.hetgpu.io)").doesNotContain("links unknown");
    }

    @Test
    void onANodeOfHetgpusInventoryTooTheClaimsDevicesAreTheInventorysPositions() {
        var dgx1 = TestTopologies.dgx1V100("dgx1");
        var slices = SliceReader.read("dgx1", List.of(slice("h", "dgx1", HETGPU, "dgx1", 1, 1, hetgpuGpus(dgx1, catalog))), catalog);

        var gpus = reader.read(new NodeFacts("dgx1", "1", Map.of(), TestTopologies.inventory(dgx1), null, null, true, slices));

        assertThat(gpus.source()).as("the measured links first").isInstanceOf(NodeGpuSource.HetgpuInventory.class);
        assertThat(gpus.maskOf(List.of("gpu.hetgpu.io/dgx1/gpu-3", "gpu.hetgpu.io/dgx1/gpu-4"))).hasValue((1L << 3) | (1L << 4));
        assertThat(gpus.maskOf(List.of(dgx1.device(2).uuid()))).hasValue(1L << 2);
        assertThat(gpus.maskOf(List.of("gpu.hetgpu.io/dgx1/gpu-8"))).as("no such position").isEmpty();
        assertThat(gpus.maskOf(List.of("gpu.nvidia.com/dgx1/gpu-3"))).as("another driver's device").isEmpty();
    }

    @Test
    void aNodeOfHetgpusDriverWithoutNvlinkHasItsLinksKnownAsNone() {
        var t4 = TestTopologies.t4x4("t4");
        var slices = SliceReader.read("t4", List.of(slice("h", "t4", HETGPU, "t4", 1, 1, hetgpuGpus(t4, catalog))), catalog);

        var gpus = reader.read(facts("t4", slices, null));

        assertThat(slices.gpus()).allSatisfy(gpu -> assertThat(gpu.nvlinkSets()).isEmpty());
        assertThat(gpus.source().knowsNvlink()).as("the driver would name a set it had").isTrue();
        assertThat(gpus.topology().hasNvlink()).isFalse();
    }

    @Test
    void aCardTheCatalogDoesNotKnowRanksByThePublishedTier() {
        var device = new DeviceBuilder(hetgpuGpus(TestTopologies.t4x4("n"), catalog).getFirst())
                .addToAttributes(HetgpuDra.MODEL, TestDra.text("X9000"))
                .addToAttributes(HetgpuDra.TIER, new DeviceAttributeBuilder().withInt(4242L).build()).build();
        var absurd = new DeviceBuilder(device).withName("gpu-1")
                .addToAttributes(HetgpuDra.TIER, new DeviceAttributeBuilder().withInt(Long.MAX_VALUE).build()).build();

        var slices = SliceReader.read("n", List.of(slice("h", "n", HETGPU, "n", 1, 1, List.of(device, absurd))), catalog);
        var gpus = reader.read(facts("n", slices, null));

        assertThat(gpus.tiers().getFirst().rank()).isEqualTo(4242);
        assertThat(gpus.tiers().get(1).rank()).as("a tier past any real one is not read; the catalog estimates it")
                .isEqualTo(catalog.tierOf("X9000", new ComputeCapability(7, 5), 15360).rank());
    }

    @Test
    void otherNodesOtherDriversAndDevicesThatAreNoGpusAreNotRead() {
        var nic = new DeviceBuilder().withName("eth0").withAttributes(Map.of("type", TestDra.text("nic"))).build();
        var slices = SliceReader.read("n", List.of(
                slice("other-node", "m", NVIDIA, "m", 1, 1, nvidiaGpus(8, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi")),
                slice("other-driver", "n", "nic.example.com", "n", 1, 1, nvidiaGpus(2, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi")),
                slice("nics", "n", NVIDIA, "n", 1, 1, List.of(nic))), catalog);

        assertThat(slices.gpus()).isEmpty();
        assertThat(slices.publishesGpus()).isFalse();
    }

    @Test
    void aNodeWhoseDevicePluginOffersGpusIsReadAsTheDevicePluginOffersThem() {
        var slices = SliceReader.read("n", List.of(slice("n", NVIDIA, 1, 1, nvidiaGpus(8, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"))), catalog);

        var gpus = reader.read(facts("n", slices, "8"));

        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.AllocatableOnly.class);
        assertThat(gpus.summary()).contains("ResourceSlices also publish GPUs here");
    }

    @Test
    void claimsNameTheirDevicesAsTheTopologyHoldsThem() {
        var gpus = reader.read(facts("n", SliceReader.read("n", List.of(slice("n", NVIDIA, 1, 1,
                nvidiaGpus(4, "Tesla V100-SXM2-16GB", "Volta", "7.0.0", "16Gi"))), catalog), null));

        assertThat(gpus.maskOf(List.of("gpu.nvidia.com/n/gpu-1", "gpu.nvidia.com/n/gpu-3", "nic.example.com/n/eth0")).getAsLong())
                .isEqualTo(0b1010);
        assertThat(gpus.maskOf(List.of("nic.example.com/n/eth0"))).isEmpty();
    }

    private static NodeFacts facts(String name, NodeSlices slices, String allocatable) {
        return new NodeFacts(name, "1", Map.of(), null, null, allocatable, true, slices);
    }

    private static Device withoutCapacity(Device device) {
        return new DeviceBuilder(device).withCapacity(null).build();
    }

    private static Device typed(Device device, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute type) {
        var attributes = new java.util.LinkedHashMap<>(device.getAttributes());
        attributes.put("type", type);
        return new DeviceBuilder(device).withAttributes(attributes).build();
    }
}
