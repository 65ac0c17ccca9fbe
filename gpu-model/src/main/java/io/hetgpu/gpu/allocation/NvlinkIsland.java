package io.hetgpu.gpu.allocation;

import io.hetgpu.gpu.LinkMatrix;
import java.util.ArrayList;
import java.util.List;

/**
 * A maximal group of GPUs, among some given devices, in which every GPU reaches every other over
 * NVLink. A pod that asks for {@code interconnect: nvlink} fits a node only if one island is large enough.
 */
public record NvlinkIsland(long mask) {

    public int size() {
        return Long.bitCount(mask);
    }

    public List<Integer> positions() {
        return DeviceMask.positions(mask);
    }

    /** The islands among the devices of {@code mask}, largest first. */
    public static List<NvlinkIsland> among(LinkMatrix links, long mask) {
        var islands = new ArrayList<NvlinkIsland>();
        long left = mask;
        while (left != 0) {
            long island = reach(links, Long.lowestOneBit(left), mask);
            islands.add(new NvlinkIsland(island));
            left &= ~island;
        }
        islands.sort((a, b) -> Integer.compare(b.size(), a.size()));
        return List.copyOf(islands);
    }

    /** True when the devices of {@code mask} form one island (a single device does). */
    static boolean isConnected(LinkMatrix links, long mask) {
        return mask == 0 || reach(links, Long.lowestOneBit(mask), mask) == mask;
    }

    private static long reach(LinkMatrix links, long start, long within) {
        long seen = start;
        long frontier = start;
        while (frontier != 0) {
            int from = Long.numberOfTrailingZeros(frontier);
            frontier &= frontier - 1;
            for (long rest = within & ~seen; rest != 0; rest &= rest - 1) {
                int to = Long.numberOfTrailingZeros(rest);
                if (links.isNvlink(from, to)) {
                    seen |= 1L << to;
                    frontier |= 1L << to;
                }
            }
        }
        return seen;
    }
}
