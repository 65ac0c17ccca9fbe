package io.hetgpu.extender.model;

import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.PcieRelation;
import java.util.List;
import java.util.TreeSet;

/**
 * The links between a node's GPUs as far as its ResourceSlices tell them: a driver publishes which NVLink-connected set
 * of each size a GPU is in (hetgpu's {@code nvlinkSet2}, {@code nvlinkSet4}, {@code nvlinkSet8}), not how many links
 * join a pair. So two GPUs of one set are NVLink-joined, ranked by the smallest set they share: the sets of 2 are the
 * node's best-connected pairs (hetgpu's node agent cuts them best first, as its allocator chooses), the sets of 4 the
 * best quads, so a pair of a smaller set scores above one that only shares a larger set, and the allocator over these
 * links takes whole sets, as a claim's {@code matchAttribute} does. Two GPUs that share no set are joined over PCIe: one
 * host bridge where both name the same PCIe root, one NUMA node where both name it, else across sockets, the worst, so
 * nothing is promised.
 *
 * <p>Where a driver publishes sets, a GPU in none of a size is in none (hetgpu's driver leaves the attribute out), so a
 * node without NVLink has its links known: all PCIe. A driver that publishes no sets (NVIDIA's) leaves them unknown,
 * and {@link NodeGpuSource.DraSlices#knowsNvlink()} says so.
 */
public final class DraLinks {

    private DraLinks() {
    }

    /** The links between the GPUs, in their order. */
    public static LinkMatrix of(List<DraDevice> gpus) {
        var links = LinkMatrix.builder(gpus.size(), new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        for (int a = 0; a < gpus.size(); a++) {
            for (int b = a + 1; b < gpus.size(); b++) {
                links.set(a, b, between(gpus.get(a), gpus.get(b)));
            }
        }
        return links.build();
    }

    /** How {@code a} reaches {@code b}. */
    static GpuLink between(DraDevice a, DraDevice b) {
        if (a.driver().equals(b.driver()) && a.pool().equals(b.pool())) {
            // Sizes smallest first: the smallest shared set ranks highest, one link above the next size's.
            var sizes = new TreeSet<>(a.nvlinkSets().keySet());
            sizes.addAll(b.nvlinkSets().keySet());
            int rank = sizes.size();
            for (int size : sizes) {
                var set = a.nvlinkSets().get(size);
                if (set != null && set.equals(b.nvlinkSets().get(size))) {
                    return new GpuLink.Nvlink(rank, false);
                }
                rank--;
            }
        }
        if (!a.pcieRoot().isEmpty() && a.pcieRoot().equals(b.pcieRoot())) {
            return new GpuLink.Pcie(PcieRelation.HOST_BRIDGE);
        }
        if (a.numaNode() != GpuDevice.NUMA_UNKNOWN && a.numaNode() == b.numaNode()) {
            return new GpuLink.Pcie(PcieRelation.SAME_NUMA_NODE);
        }
        return new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS);
    }
}
