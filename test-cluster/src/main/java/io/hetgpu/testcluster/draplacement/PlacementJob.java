package io.hetgpu.testcluster.draplacement;

import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One pod of the measurement's mix: its priority, the GPUs its one claim asks for, when it arrives and how long it holds
 * them (in ticks, one arrival per tick).
 */
public record PlacementJob(int id, HetgpuClaims.Priority priority, int gpus, int arrival, int duration) {

    /** GPU counts and their weights: mostly single GPUs, some pairs, fewer groups of 4 and 8. */
    private static final int[] COUNTS = {1, 2, 4, 8};
    private static final int[] COUNT_WEIGHTS = {50, 25, 15, 10};
    /** High, normal, low. */
    private static final int[] PRIORITY_WEIGHTS = {20, 50, 30};

    /**
     * {@code jobs} pods, one arriving each tick, each holding its GPUs for 5 to {@code 2 * meanDuration - 5} ticks: the
     * same mix for every way of claiming that a seed gives.
     */
    public static List<PlacementJob> mix(long seed, int jobs, int meanDuration) {
        if (jobs < 0 || meanDuration < 5) {
            throw new IllegalArgumentException("jobs >= 0 and meanDuration >= 5, got " + jobs + " and " + meanDuration);
        }
        var random = new Random(seed);
        var out = new ArrayList<PlacementJob>(jobs);
        for (int i = 0; i < jobs; i++) {
            var priority = HetgpuClaims.Priority.values()[pick(random, PRIORITY_WEIGHTS)];
            int gpus = COUNTS[pick(random, COUNT_WEIGHTS)];
            int duration = 5 + random.nextInt(2 * (meanDuration - 5) + 1);
            out.add(new PlacementJob(i, priority, gpus, i, duration));
        }
        return List.copyOf(out);
    }

    private static int pick(Random random, int[] weights) {
        int total = 0;
        for (int w : weights) {
            total += w;
        }
        int r = random.nextInt(total);
        for (int i = 0; i < weights.length; i++) {
            r -= weights[i];
            if (r < 0) {
                return i;
            }
        }
        return weights.length - 1;
    }
}
