package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.trust.RecordTrust;
import java.time.Clock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** The four verbs kube-scheduler calls, over one set of collaborators: what the HTTP server serves. */
public record ExtenderVerbs(ExtenderService service, Preemption preemption, BindVerb binding) {

    /** What each verb asks first: until the caches have synced, every verb refuses, saying so. */
    public CacheGate gate() {
        return service.gate();
    }

    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized) {
        return of(cluster, parser, nodes, policy, onPrioritized, advice -> { });
    }

    /** With {@code onAdvised} told each preempt answer and why (Events, metrics); without an API server to bind through. */
    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized, Consumer<PreemptionAdvice> onAdvised) {
        return of(cluster, parser, nodes, policy, onPrioritized, onAdvised, PodBinder.NONE, report -> { });
    }

    /** With the bind verb binding through {@code binder}, {@code onBound} told each bind's outcome and time. */
    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized, Consumer<PreemptionAdvice> onAdvised,
                                   PodBinder binder, Consumer<BindVerb.Report> onBound) {
        return of(cluster, parser, nodes, policy, onPrioritized, onAdvised, binder, onBound, BindVerb.Limits.DEFAULTS);
    }

    /** With the bind verb's limits: whose pods it binds, and within what time. */
    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized, Consumer<PreemptionAdvice> onAdvised,
                                   PodBinder binder, Consumer<BindVerb.Report> onBound, BindVerb.Limits bindLimits) {
        return of(cluster, parser, nodes, policy, onPrioritized, onAdvised, binder, onBound, bindLimits, WholeJobs.Settings.DEFAULTS);
    }

    /** With whole jobs placed as {@code jobSettings} say (job sizes, how long a plan holds its GPUs). */
    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized, Consumer<PreemptionAdvice> onAdvised,
                                   PodBinder binder, Consumer<BindVerb.Report> onBound, BindVerb.Limits bindLimits,
                                   WholeJobs.Settings jobSettings) {
        return of(cluster, parser, nodes, policy, onPrioritized, onAdvised, binder, onBound, bindLimits, jobSettings,
                RecordTrust.ownKey(bindLimits.schedulerNames()));
    }

    /** With the bind verb signing its records with {@code trust}'s key, the one {@code cluster} trusts records by. */
    public static ExtenderVerbs of(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                                   BiConsumer<PodRequest, ScoreTable> onPrioritized, Consumer<PreemptionAdvice> onAdvised,
                                   PodBinder binder, Consumer<BindVerb.Report> onBound, BindVerb.Limits bindLimits,
                                   WholeJobs.Settings jobSettings, RecordTrust trust) {
        var jobs = WholeJobs.of(cluster, parser, nodes, policy, jobSettings, Clock.systemUTC(), onPrioritized);
        var service = new ExtenderService(cluster, parser, nodes, policy, onPrioritized, jobs);
        // One gate for the four verbs: none acts before the caches have synced, and refusals are counted in one place.
        var gate = service.gate();
        return new ExtenderVerbs(service,
                new Preemption(cluster, parser, nodes, policy, service::closedTier, Clock.systemUTC(), onAdvised, gate, jobs),
                new BindVerb(cluster, parser, nodes, policy, service::closedTier, binder, Clock.systemUTC(), onBound, bindLimits, gate, jobs,
                        trust));
    }
}
