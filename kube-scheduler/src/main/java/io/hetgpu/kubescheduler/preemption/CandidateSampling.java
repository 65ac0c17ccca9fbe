package io.hetgpu.kubescheduler.preemption;

/**
 * How many nodes kube-scheduler's DefaultPreemption tries as candidates ({@code GetOffsetAndNumCandidates}): 10 %
 * of the nodes that might become feasible ({@code minCandidateNodesPercentage}), at least 100
 * ({@code minCandidateNodesAbsolute}), at most all of them, starting from a random offset so that repeated
 * preemptions do not always pick the same nodes.
 */
public record CandidateSampling(int minPercentage, int minAbsolute) {

    public static final CandidateSampling DEFAULTS = new CandidateSampling(10, 100);

    public int numCandidates(int potentialNodes) {
        int count = potentialNodes * minPercentage / 100;
        return Math.min(Math.max(count, minAbsolute), potentialNodes);
    }
}
