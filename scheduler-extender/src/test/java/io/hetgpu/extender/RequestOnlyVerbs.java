package io.hetgpu.extender;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.function.BiConsumer;

/** The verbs of an extender without an API server (answers from the request alone), with the default policy: for tests of the HTTP front. */
public final class RequestOnlyVerbs {

    private RequestOnlyVerbs() {
    }

    public static ExtenderVerbs create() {
        return create((pod, table) -> { });
    }

    /** With {@code onPrioritized} told each prioritize answer. */
    public static ExtenderVerbs create(BiConsumer<PodRequest, ScoreTable> onPrioritized) {
        var catalog = CardCatalog.defaults();
        return ExtenderVerbs.of(ClusterView.REQUEST_ONLY, new PodRequestParser("nvidia.com/gpu", catalog),
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), new PlacementPolicy(PolicySettings.DEFAULTS), onPrioritized);
    }
}
