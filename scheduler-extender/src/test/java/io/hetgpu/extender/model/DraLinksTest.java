package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestTopologies;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.GpuSetAllocator;
import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DraLinksTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    @Test
    void theSmallestSetTwoGpusShareRanksTheirLink() {
        var a = gpu("gpu-0", Map.of(2, "0", 4, "0", 8, "0"), 0, "");
        var pair = gpu("gpu-1", Map.of(2, "0", 4, "0", 8, "0"), 0, "");
        var quad = gpu("gpu-2", Map.of(2, "1", 4, "0", 8, "0"), 0, "");
        var node = gpu("gpu-4", Map.of(2, "2", 4, "1", 8, "0"), 1, "");

        assertThat(DraLinks.between(a, pair)).isEqualTo(new GpuLink.Nvlink(3, false));
        assertThat(DraLinks.between(a, quad)).isEqualTo(new GpuLink.Nvlink(2, false));
        assertThat(DraLinks.between(a, node)).isEqualTo(new GpuLink.Nvlink(1, false));
    }

    @Test
    void gpusOfNoCommonSetAreJoinedOverPcieAsFarAsTheSlicesTell() {
        assertThat(DraLinks.between(gpu("a", Map.of(), 0, "pci0000:00"), gpu("b", Map.of(), 0, "pci0000:00")))
                .isEqualTo(new GpuLink.Pcie(PcieRelation.HOST_BRIDGE));
        assertThat(DraLinks.between(gpu("a", Map.of(), 0, "pci0000:00"), gpu("b", Map.of(), 0, "pci0000:40")))
                .isEqualTo(new GpuLink.Pcie(PcieRelation.SAME_NUMA_NODE));
        assertThat(DraLinks.between(gpu("a", Map.of(), 0, ""), gpu("b", Map.of(), 1, "")))
                .isEqualTo(new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        assertThat(DraLinks.between(gpu("a", Map.of(), GpuDevice.NUMA_UNKNOWN, ""), gpu("b", Map.of(), GpuDevice.NUMA_UNKNOWN, "")))
                .as("nothing known: the worst, nothing promised").isEqualTo(new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        var otherPool = new DraDevice("gpu.hetgpu.io", "other", "gpu-1", "V100", "V100", 16160, new ComputeCapability(7, 0), 0,
                Map.of(2, "0"), 0, "", true);
        assertThat(DraLinks.between(gpu("gpu-0", Map.of(2, "0"), 0, ""), otherPool)).as("sets are named within a pool")
                .isEqualTo(new GpuLink.Pcie(PcieRelation.SAME_NUMA_NODE));
    }

    /** The allocator over the links the slices tell takes whole published sets, as a claim's matchAttribute does. */
    @Test
    void theAllocatorOverTheseLinksTakesThePublishedSets() {
        for (var topology : List.of(TestTopologies.dgx1V100("n"), TestTopologies.dgxA100("n"))) {
            var slices = SliceReader.read("n", List.of(io.hetgpu.extender.TestDra.slice("h", "n", "gpu.hetgpu.io", "n", 1, 1,
                    io.hetgpu.extender.TestDra.hetgpuGpus(topology, catalog))), catalog);
            var allocator = new GpuSetAllocator(DraLinks.of(slices.gpus()));
            for (int size : List.of(2, 4)) {
                var published = NvlinkSets.of(topology.links(), size);
                var chosen = allocator.choose(DeviceMask.all(8), 0, size, true).orElseThrow();
                assertThat(published.sets()).as(size + " of " + topology.device(0).model()).anySatisfy(set ->
                        assertThat(set.positions()).containsExactlyElementsOf(chosen.positions()));
                // With the first published set taken, the next choice is another published set.
                var rest = DeviceMask.all(8) & ~DeviceMask.of(published.sets().getFirst().positions());
                var next = allocator.choose(rest, 0, size, true).orElseThrow();
                assertThat(published.sets()).anySatisfy(set -> assertThat(set.positions()).containsExactlyElementsOf(next.positions()));
            }
        }
    }

    private static DraDevice gpu(String name, Map<Integer, String> sets, int numa, String root) {
        return new DraDevice("gpu.hetgpu.io", "n", name, "Tesla V100-SXM2-16GB", "V100", 16160, new ComputeCapability(7, 0), 0,
                sets, numa, root, true);
    }
}
