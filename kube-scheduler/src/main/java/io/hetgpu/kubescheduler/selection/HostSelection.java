package io.hetgpu.kubescheduler.selection;

/**
 * kube-scheduler's selectHost over nodes offered one at a time with their total scores: the highest
 * wins, ties go to the {@link TieBreak}. The first node offered never consults it.
 *
 * @param <T> how the caller names a node
 */
public final class HostSelection<T> {

    private final TieBreak ties;
    private T chosen;
    private long best = Long.MIN_VALUE;
    private int seen;

    public HostSelection(TieBreak ties) {
        this.ties = ties;
    }

    public void offer(T node, long score) {
        if (seen == 0 || score > best) {
            best = score;
            chosen = node;
            seen = 1;
        } else if (score == best && ties.replaces(++seen)) {
            chosen = node;
        }
    }

    /** The node chosen so far; null when none was offered. */
    public T chosen() {
        return chosen;
    }
}
