package io.hetgpu.kubescheduler.selection;

import java.util.Random;

/**
 * How kube-scheduler's selectHost chooses among nodes that share the highest score: it walks them in
 * order and lets the {@code seen}-th one replace the choice with probability 1/seen (reservoir
 * sampling), so each has the same chance. Two schedulers given equal scores in equal order and equally
 * seeded tie-breaks choose alike; that is how the simulator's placements are checked against the test
 * cluster's.
 */
@FunctionalInterface
public interface TieBreak {

    /** Whether the {@code seen}-th node (2 or more) with the best score so far replaces the one chosen. */
    boolean replaces(int seen);

    /** kube-scheduler's own: uniform among the tied nodes. */
    static TieBreak random(Random random) {
        return seen -> random.nextInt(seen) == 0;
    }
}
