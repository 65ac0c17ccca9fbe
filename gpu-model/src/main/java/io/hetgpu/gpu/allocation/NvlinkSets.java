package io.hetgpu.gpu.allocation;

import io.hetgpu.gpu.LinkMatrix;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A node's GPUs cut into NVLink-connected sets of one size, each GPU in at most one: the groups a DRA claim's
 * {@code matchAttribute} can ask for. A constraint matches equal values, so the sets of one size must not overlap;
 * they are taken best first by the same allocator that serves device-plugin pods (highest link score, then the best
 * connected rest), so a DRA claim gets the set a device-plugin pod on an empty node would get.
 *
 * @param size the set size
 * @param sets each set's positions, in the order their identifiers are given ({@code "0"}, {@code "1"}, …)
 */
public record NvlinkSets(int size, List<GpuSet> sets) {

    /** The set sizes a node may offer; a node offers those no larger than its GPU count. */
    public static final List<Integer> SIZES = List.of(2, 4, 8);

    public NvlinkSets {
        sets = List.copyOf(sets);
    }

    /** The NVLink sets of {@code size} among all GPUs of {@code links}; none on a node without NVLink. */
    public static NvlinkSets of(LinkMatrix links, int size) {
        if (size < 2) {
            throw new IllegalArgumentException("an NVLink set has at least 2 GPUs, got " + size);
        }
        var allocator = new GpuSetAllocator(links);
        var sets = new ArrayList<GpuSet>();
        long left = DeviceMask.all(links.size());
        while (Long.bitCount(left) >= size) {
            var best = allocator.choose(left, 0, size, true);
            if (best.isEmpty()) {
                break;
            }
            sets.add(best.get());
            left &= ~DeviceMask.of(best.get().positions());
        }
        return new NvlinkSets(size, sets);
    }

    /** Every size of {@link #SIZES} the node has GPUs for, with its sets (possibly none). */
    public static List<NvlinkSets> offeredBy(LinkMatrix links) {
        return SIZES.stream().filter(size -> size <= links.size()).map(size -> of(links, size)).toList();
    }

    /** The identifier of the set holding {@code position}, if one does. */
    public Optional<String> setOf(int position) {
        for (int i = 0; i < sets.size(); i++) {
            if (sets.get(i).positions().contains(position)) {
                return Optional.of(Integer.toString(i));
            }
        }
        return Optional.empty();
    }
}
