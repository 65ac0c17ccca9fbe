package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeGpuSource;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.gpu.tier.CardGeneration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Priority picks the card, topology picks the set, where kube-scheduler ranks the nodes by a claim: for a pod of several
 * GPUs that prefers new or old cards by tier, on nodes whose GPUs a DRA driver publishes, the candidates in the order of
 * their {@link CardGeneration} (the pod's preferred one first), then of their set's links, then of their tier score.
 * There kube-scheduler's DynamicResources plugin scores each node by the alternative of the pod's claim it serves, and
 * hetgpu's claims list generations first and a set within each. A weighted sum of a tier and an NVLink score would
 * trade one against the other by how far apart the candidates' tiers happen to be (a low-priority job of four GPUs
 * taking a V100 NVLink set over a K80 box when H100s are among the nodes scored, the K80s when they are not), and the
 * two schedulers' scores would pull apart, the outcome left to the ratio of their weights. On nodes of hetgpu's device
 * plugin the extender is the only one to rank cards and sets, and weighs them.
 */
final class CardThenSet {

    private CardThenSet() {
    }

    /**
     * Whether the pod's cards are ranked this way: several GPUs, a tier preference, no speed table row for its class (a
     * class the table knows is ranked by its speeds, against which the set weighs), and nodes served by a DRA driver.
     */
    static boolean applies(PodRequest pod, GpuPreference preference, WorkloadThroughputs throughputs,
                           List<Candidate> candidates) {
        if (pod.gpuCount() < 2 || preference != GpuPreference.NEWEST && preference != GpuPreference.OLDEST || throughputs.knows(pod.workload())) {
            return false;
        }
        for (var candidate : candidates) {
            if (candidate.node().gpus().source() instanceof NodeGpuSource.DraSlices) {
                return true;
            }
        }
        return false;
    }

    /**
     * Each candidate's place in that order, 0..1 (1 the best), equal only for candidates equal on all three.
     *
     * @param tierScores the tier scorer's plain column (1 = the preferred end)
     * @param linkShares each candidate's link score relative to the best candidate's ({@link NvlinkScorer#linkShares})
     */
    static double[] scores(GpuPreference preference, List<Candidate> candidates, double[] tierScores, double[] linkShares) {
        int n = candidates.size();
        var generation = new int[n];
        for (int i = 0; i < n; i++) {
            int age = CardGeneration.age(candidates.get(i).tierRank());
            generation[i] = preference == GpuPreference.NEWEST ? -age : age;
        }
        Comparator<Integer> order = Comparator.<Integer>comparingInt(i -> generation[i])
                .thenComparingDouble(i -> linkShares[i])
                .thenComparingDouble(i -> tierScores[i]);
        var byOrder = new Integer[n];
        Arrays.setAll(byOrder, i -> i);
        Arrays.sort(byOrder, order);
        var places = new int[n];
        int place = 0;
        for (int k = 0; k < n; k++) {
            if (k > 0 && order.compare(byOrder[k - 1], byOrder[k]) != 0) {
                place++;
            }
            places[byOrder[k]] = place;
        }
        var scores = new double[n];
        for (int i = 0; i < n; i++) {
            scores[i] = place == 0 ? 1 : places[i] / (double) place;
        }
        return scores;
    }
}
