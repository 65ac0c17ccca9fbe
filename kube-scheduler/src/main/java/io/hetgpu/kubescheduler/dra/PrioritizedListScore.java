package io.hetgpu.kubescheduler.dra;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The DynamicResources plugin's Score for prioritized lists (KEP-4816's scoring, kube-scheduler 1.35 and later;
 * {@code Score}, {@code computeScore} and {@code NormalizeScore} in
 * {@code pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go}): a node earns, for each
 * {@code firstAvailable} request of the pod's claims, {@code 8 - i} where {@code i} is the index of the alternative its
 * allocation on that node took (8 is {@code FirstAvailableDeviceRequestMaxSize}); {@code exactly} requests earn nothing.
 * The raw scores are then scaled so that the best node has 100 ({@code helper.DefaultNormalizeScore}), and the plugin
 * weighs 1, as the default configuration enables it without a weight.
 *
 * <p>So among the nodes the filter kept, the one whose devices serve the earliest alternatives wins, where first fit
 * alone would take any node that serves some alternative. Through 1.34 the plugin has no Score: a caller modelling those
 * releases leaves this out.
 */
public final class PrioritizedListScore {

    /** {@code resourceapi.FirstAvailableDeviceRequestMaxSize}: the API server refuses a longer list. */
    public static final int FIRST_AVAILABLE_MAX_SIZE = 8;
    /** {@code framework.MaxNodeScore}. */
    public static final long MAX_NODE_SCORE = 100;

    private PrioritizedListScore() {
    }

    /**
     * The raw score of one node: the pod's claims allocated there, paired by position with their allocations (as the
     * allocator returns them). An alternative beyond the API's 8 earns nothing rather than a negative score.
     */
    public static long raw(List<Claim> claims, List<ClaimAllocation> allocations) {
        if (claims.size() != allocations.size()) {
            throw new IllegalArgumentException(claims.size() + " claims but " + allocations.size() + " allocations");
        }
        long score = 0;
        for (int c = 0; c < claims.size(); c++) {
            var taken = new HashSet<String>();
            for (var result : allocations.get(c).results()) {
                taken.add(result.request());
            }
            for (var request : claims.get(c).requests()) {
                if (request instanceof DeviceRequest.FirstAvailable first) {
                    for (int i = 0; i < first.subRequests().size(); i++) {
                        if (taken.contains(first.name() + "/" + first.subRequests().get(i).name())) {
                            score += Math.max(0, FIRST_AVAILABLE_MAX_SIZE - i);
                        }
                    }
                }
            }
        }
        return score;
    }

    /**
     * {@code DefaultNormalizeScore(MaxNodeScore, false, scores)}: each score times 100 over the highest, in integers; all
     * left at 0 when the highest is 0.
     *
     * @param <N> how the caller names a node
     */
    public static <N> Map<N, Long> normalized(Map<N, Long> raw) {
        long highest = 0;
        for (long score : raw.values()) {
            highest = Math.max(highest, score);
        }
        var out = new LinkedHashMap<N, Long>();
        for (var entry : raw.entrySet()) {
            out.put(entry.getKey(), highest == 0 ? entry.getValue() : MAX_NODE_SCORE * entry.getValue() / highest);
        }
        return out;
    }
}
