package io.hetgpu.kubescheduler.dra;

/**
 * The bounds on one allocation, all set by configuration and none by what a pod author writes: kube-scheduler bounds a
 * selector's CEL cost and the size of a result, and stops a search with its scheduling cycle; the model bounds the same
 * things in its own units.
 *
 * @param maxExpressionLength        a selector longer than this is refused (the API server's limit is 10 Ki)
 * @param maxSelectorCost            CEL expression nodes one selector may evaluate on one device (cel-go counts cost in its
 *                                   own units: the model's unit is one evaluated node)
 * @param maxComprehensionIterations iterations of {@code all}, {@code exists}, {@code map}, {@code filter} in one evaluation
 * @param maxSelectorsPerRequest     selectors of one class or one request
 * @param maxDevicesPerClaim         devices one claim may be allocated ({@code AllocationResultsMaxSize}, 32)
 * @param maxClaimsPerPod            claims allocated together for one pod
 * @param maxSearchSteps             devices tried, over the whole search for one pod on one node
 * @param maxCachedSelectors         compiled selectors kept between allocations
 */
public record DraLimits(int maxExpressionLength, long maxSelectorCost, int maxComprehensionIterations, int maxSelectorsPerRequest,
                        int maxDevicesPerClaim, int maxClaimsPerPod, long maxSearchSteps, int maxCachedSelectors) {

    public static final DraLimits DEFAULTS = new DraLimits(10 * 1024, 100_000, 10_000, 32, 32, 32, 1_000_000, 1_024);

    public DraLimits {
        if (maxExpressionLength < 1 || maxSelectorCost < 1 || maxComprehensionIterations < 1 || maxSelectorsPerRequest < 1
                || maxDevicesPerClaim < 1 || maxClaimsPerPod < 1 || maxSearchSteps < 1 || maxCachedSelectors < 1) {
            throw new IllegalArgumentException("every DRA limit is at least 1");
        }
    }

    public DraLimits withMaxSearchSteps(long steps) {
        return new DraLimits(maxExpressionLength, maxSelectorCost, maxComprehensionIterations, maxSelectorsPerRequest,
                maxDevicesPerClaim, maxClaimsPerPod, steps, maxCachedSelectors);
    }

    public DraLimits withMaxSelectorCost(long cost) {
        return new DraLimits(maxExpressionLength, cost, maxComprehensionIterations, maxSelectorsPerRequest,
                maxDevicesPerClaim, maxClaimsPerPod, maxSearchSteps, maxCachedSelectors);
    }
}
