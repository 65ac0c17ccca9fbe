package io.hetgpu.gpu.allocation;

import io.hetgpu.gpu.LinkMatrix;
import java.util.Optional;

/**
 * Chooses which GPUs of a node a pod gets. The same class runs in the device plugin (kubelet's
 * GetPreferredAllocation) and in the scheduler extender (what a node would give a pod), so the two
 * never disagree.
 *
 * <p>The best set has the highest {@linkplain GpuSet#linkScore() link score} (sum of pair scores);
 * among equal sets, the one that leaves the remaining available devices best connected (highest
 * {@linkplain GpuSet#leftoverScore() leftover score}), so that odd-sized requests do not break up the
 * NVLink pairs a later request needs; among those, the lowest positions. The search is exact: every
 * set of the requested size is scored incrementally in O(size), which is a few thousand sets for 8
 * GPUs and 12,870 for 8 of 16. Above {@link #EXACT_SEARCH_LIMIT} candidate sets (nodes far larger
 * than any shipping server) it falls back to a greedy choice.
 *
 * <p>Pure and thread-safe: built once per topology, it holds only the immutable score matrix.
 */
public final class GpuSetAllocator {

    /** Largest number of candidate sets searched exhaustively. */
    public static final long EXACT_SEARCH_LIMIT = 5_000_000;

    private final LinkMatrix links;
    private final int n;
    private final int[][] score;

    public GpuSetAllocator(LinkMatrix links) {
        if (links.size() > DeviceMask.MAX_DEVICES) {
            throw new IllegalArgumentException("at most " + DeviceMask.MAX_DEVICES + " GPUs per node, got " + links.size());
        }
        this.links = links;
        this.n = links.size();
        this.score = new int[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                score[i][j] = links.score(i, j);
            }
        }
    }

    public LinkMatrix links() {
        return links;
    }

    /**
     * The best set of {@code size} devices drawn from {@code available} that contains every device of
     * {@code mustInclude}; empty when none exists (too few devices, or no NVLink-connected set when
     * {@code requireNvlink}).
     */
    public Optional<GpuSet> choose(long available, long mustInclude, int size, boolean requireNvlink) {
        available &= DeviceMask.all(n);
        if (size < 0 || (mustInclude & ~DeviceMask.all(n)) != 0) {
            throw new IllegalArgumentException("size must be >= 0 and must-include devices on this node");
        }
        long pool = available | mustInclude;
        int mustCount = Long.bitCount(mustInclude);
        if (mustCount > size || Long.bitCount(pool) < size) {
            return Optional.empty();
        }
        var search = new Search(pool, mustInclude, requireNvlink);
        int[] candidates = toArray(pool & ~mustInclude);
        int picks = size - mustCount;
        if (combinations(candidates.length, picks) <= EXACT_SEARCH_LIMIT) {
            search.exhaustive(candidates, picks);
        } else {
            search.greedy(candidates, picks);
        }
        return search.best();
    }

    /** Convenience over positions, for callers at the boundary. */
    public Optional<GpuSet> choose(java.util.Collection<Integer> available, java.util.Collection<Integer> mustInclude,
                                   int size, boolean requireNvlink) {
        return choose(DeviceMask.of(available), DeviceMask.of(mustInclude), size, requireNvlink);
    }

    /** Sum of pair scores inside a set. */
    public long linkScore(long set) {
        long total = 0;
        for (long a = set; a != 0; a &= a - 1) {
            int i = Long.numberOfTrailingZeros(a);
            for (long b = a & (a - 1); b != 0; b &= b - 1) {
                total += score[i][Long.numberOfTrailingZeros(b)];
            }
        }
        return total;
    }

    /** One search: the pool's pair totals are computed once, then each candidate set costs O(size). */
    private final class Search {
        private final long pool;
        private final long must;
        private final boolean requireNvlink;
        private final long[] toPool = new long[n];
        private final long poolTotal;

        private long bestSet;
        private long bestLink = Long.MIN_VALUE;
        private long bestLeftover = Long.MIN_VALUE;
        private boolean found;

        Search(long pool, long must, boolean requireNvlink) {
            this.pool = pool;
            this.must = must;
            this.requireNvlink = requireNvlink;
            for (long a = pool; a != 0; a &= a - 1) {
                int i = Long.numberOfTrailingZeros(a);
                for (long b = pool; b != 0; b &= b - 1) {
                    toPool[i] += score[i][Long.numberOfTrailingZeros(b)];
                }
            }
            this.poolTotal = linkScore(pool);
        }

        void exhaustive(int[] candidates, int picks) {
            long internal = linkScore(must);
            long rows = 0;
            for (long a = must; a != 0; a &= a - 1) {
                rows += toPool[Long.numberOfTrailingZeros(a)];
            }
            extend(candidates, 0, picks, must, internal, rows);
        }

        private void extend(int[] candidates, int from, int picks, long set, long internal, long rows) {
            if (picks == 0) {
                offer(set, internal, rows);
                return;
            }
            for (int c = from; c <= candidates.length - picks; c++) {
                int device = candidates[c];
                long added = 0;
                for (long s = set; s != 0; s &= s - 1) {
                    added += score[device][Long.numberOfTrailingZeros(s)];
                }
                extend(candidates, c + 1, picks - 1, set | (1L << device), internal + added, rows + toPool[device]);
            }
        }

        /** Grows the set one device at a time, each time taking the device that adds the most link score. */
        void greedy(int[] candidates, int picks) {
            long set = must;
            for (int step = 0; step < picks; step++) {
                int bestDevice = -1;
                long bestGain = Long.MIN_VALUE;
                for (int device : candidates) {
                    if ((set & (1L << device)) != 0) {
                        continue;
                    }
                    long gain = 0;
                    for (long s = set; s != 0; s &= s - 1) {
                        gain += score[device][Long.numberOfTrailingZeros(s)];
                    }
                    if (gain > bestGain) {
                        bestGain = gain;
                        bestDevice = device;
                    }
                }
                set |= 1L << bestDevice;
            }
            long rows = 0;
            for (long a = set; a != 0; a &= a - 1) {
                rows += toPool[Long.numberOfTrailingZeros(a)];
            }
            offer(set, linkScore(set), rows);
        }

        private void offer(long set, long internal, long rows) {
            // Pairs touching the set = rows - internal (each internal pair is counted twice in rows).
            long leftover = poolTotal - (rows - internal);
            boolean better = internal > bestLink || (internal == bestLink && leftover > bestLeftover);
            if (!better || (requireNvlink && !NvlinkIsland.isConnected(links, set))) {
                return;
            }
            bestSet = set;
            bestLink = internal;
            bestLeftover = leftover;
            found = true;
        }

        Optional<GpuSet> best() {
            if (!found) {
                return Optional.empty();
            }
            return Optional.of(new GpuSet(DeviceMask.positions(bestSet), bestLink, bestLeftover,
                    NvlinkIsland.isConnected(links, bestSet)));
        }
    }

    private static int[] toArray(long mask) {
        return DeviceMask.positions(mask).stream().mapToInt(Integer::intValue).toArray();
    }

    static long combinations(int n, int k) {
        if (k < 0 || k > n) {
            return 0;
        }
        long result = 1;
        for (int i = 1; i <= Math.min(k, n - k); i++) {
            result = result * (n - k + i) / i;
            if (result > EXACT_SEARCH_LIMIT) {
                return Long.MAX_VALUE;
            }
        }
        return result;
    }
}
