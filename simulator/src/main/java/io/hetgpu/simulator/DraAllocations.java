package io.hetgpu.simulator;

import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.DeviceClass;
import io.hetgpu.kubescheduler.dra.DeviceId;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's DRA allocator on the simulated nodes: one claim on one node, given which of its GPUs are free, answered
 * as the GPUs (a position mask) the allocator takes and the prioritized-list score it earns there.
 *
 * <p>The allocator evaluates each selector on each device per node per attempt, and a simulation tries every pending pod
 * on every node whenever GPUs are freed. But its answer depends only on the claim's shape, the node's devices (their
 * attributes never change in a simulation) and which of them are free, so it is remembered under exactly that key: at most
 * {@code maxEntries} answers, the least recently used forgotten first. The claims themselves are kept per shape (priority
 * level and GPU count, at most three per count a node can hold).
 */
final class DraAllocations {

    /** Answers kept by default: every shape on every node of Gavel's cluster in every state of its GPUs fits twice over. */
    static final int DEFAULT_MAX_ENTRIES = 131_072;

    /** Where the claim's devices went and what the node earns for it; {@code mask} 0 never occurs for a claim of GPUs. */
    record Allocation(long mask, long rawScore) {
    }

    private static final Allocation NONE = new Allocation(0, 0);

    private record Key(int shape, int node, long free) {
    }

    private final List<SimNode> nodes;
    private final List<List<ResourceSlice>> slices;
    private final Map<String, DeviceClass> classes = Map.of(HetgpuClaims.DEVICE_CLASS, HetgpuClaims.deviceClass());
    private final StructuredAllocator allocator;
    private final Map<Key, Allocation> answers;

    DraAllocations(List<SimNode> nodes, CardCatalog catalog, DraLimits limits, int maxEntries) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1, got " + maxEntries);
        }
        this.nodes = List.copyOf(nodes);
        this.slices = nodes.stream().map(node -> List.of(DraSlices.of(node, catalog))).toList();
        this.allocator = new StructuredAllocator(limits);
        this.answers = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Allocation> eldest) {
                return size() > maxEntries;
            }
        };
    }

    /**
     * The allocation of {@code claim} on the node with only the GPUs of {@code free} (a position mask) free; null when the
     * allocator finds none.
     *
     * @param shape an ID the caller gives each distinct claim: the same ID, the same claim
     */
    Allocation allocate(int shape, Claim claim, int node, long free) {
        var key = new Key(shape, node, free);
        var known = answers.get(key);
        if (known == null) {
            known = compute(claim, node, free);
            answers.put(key, known);
        }
        return known == NONE ? null : known;
    }

    /** Answers remembered now. */
    int size() {
        return answers.size();
    }

    /** What the allocator does, unremembered ({@code mask} 0 where it finds no devices): what the cache remembers. */
    Allocation compute(Claim claim, int node, long free) {
        var name = nodes.get(node).name();
        var taken = new HashSet<DeviceId>();
        var slice = slices.get(node).get(0);
        for (var device : slice.devices()) {
            var position = HetgpuDra.positionOf(device.name());
            if (position.isEmpty() || (free & (1L << position.get())) == 0) {
                taken.add(new DeviceId(slice.driver(), slice.pool(), device.name()));
            }
        }
        if (!(allocator.allocate(name, slices.get(node), classes, taken, List.of(claim)) instanceof AllocationOutcome.Allocated done)) {
            return NONE;
        }
        long mask = 0;
        for (var result : done.claims().get(0).results()) {
            mask |= 1L << HetgpuDra.positionOf(result.device()).orElseThrow();
        }
        return new Allocation(mask, PrioritizedListScore.raw(List.of(claim), done.claims()));
    }

    /** The slice the allocator reads for the node. */
    ResourceSlice slice(int node) {
        return slices.get(node).get(0);
    }
}
