package io.hetgpu.extender;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.service.BindVerb;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.service.PreemptionAdvice;
import io.hetgpu.extender.service.WholeJobs;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Clock;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * What a configuration makes of the extender, apart from where its cluster state comes from and how it is served: the
 * card table with the admin's tiers, the pod reader, the node states, the policy, which device records count (the
 * verbs' and the cluster view's: {@code trust}), and the four verbs over a cluster view.
 * {@link Extender#start} serves these verbs over HTTP beside informers; a tool that asks where a pod would go calls the
 * very same verbs in process over a copy of the cluster, so the two cannot give different answers.
 */
public record ExtenderSetup(ExtenderConfig config, CardCatalog catalog, PodRequestParser parser, NodeStateFactory nodeStates,
                            PlacementPolicy policy, RecordTrust trust) {

    public static ExtenderSetup of(ExtenderConfig config) {
        var catalog = CardCatalog.defaults().withOverrides(config.tiers());
        // A record on a pod not bound yet holds its devices while the bind that wrote it may still run, in any process.
        var nodeStates = new NodeStateFactory(catalog, config.rackLabel(), config.resourceName(),
                NodeStateFactory.recordLifetime(config.httpTimeout()), Clock.systemUTC());
        var learning = config.learning();
        // Learning on, any class a pod names is learned (the learner bounds their number and names); off, a configured
        // table lists every class there is, and a pod naming another is told so.
        var classes = learning.enabled() ? java.util.Set.<String>of() : config.policy().throughputs().table().keySet();
        var throughputs = learning.enabled()
                ? ThroughputSource.learning(new ThroughputLearner(learning), config.policy().throughputs())
                : ThroughputSource.fixed(config.policy().throughputs());
        return new ExtenderSetup(config, catalog,
                new PodRequestParser(config.resourceName(), catalog, classes), nodeStates,
                new PlacementPolicy(config.policy(), throughputs),
                // A key of this process's own until one is read from the replicas' Secret (RecordTrust#use).
                RecordTrust.ownKey(Set.copyOf(config.schedulerNames())));
    }

    /**
     * The learner the policy reads, for whoever feeds it pods that end and persists it; empty with
     * {@code policy.learning.enabled: false}.
     */
    public java.util.Optional<ThroughputLearner> learner() {
        return policy.throughputs() instanceof ThroughputSource.LearningSource source ? java.util.Optional.of(source.learner())
                : java.util.Optional.empty();
    }

    /** The same setup, pods' ResourceClaims read from {@code lookup}. */
    public ExtenderSetup withDra(io.hetgpu.extender.model.DraLookup lookup) {
        return new ExtenderSetup(config, catalog, parser.withDra(lookup), nodeStates, policy, trust);
    }

    /** The same setup, records judged (and signed) by {@code other}. */
    public ExtenderSetup withTrust(RecordTrust other) {
        return new ExtenderSetup(config, catalog, parser, nodeStates, policy, other);
    }

    /** Whose pods the bind verb binds, and within what time. */
    public BindVerb.Limits bindLimits() {
        return new BindVerb.Limits(Set.copyOf(config.schedulerNames()), config.httpTimeout());
    }

    /**
     * The verbs over {@code cluster}.
     *
     * @param onScored  told each pod's scores over the nodes it was scored on: by the prioritize verb, and for a pod of a
     *                  job of several when its job is planned
     * @param onAdvised told each preempt answer and why
     * @param binder    the API calls of a bind
     * @param onBound   told each bind's outcome and time
     * @param sizes     job member counts
     * @param plans     told each job plan made and ended
     */
    public ExtenderVerbs verbs(ClusterView cluster, BiConsumer<PodRequest, ScoreTable> onScored, Consumer<PreemptionAdvice> onAdvised,
                               PodBinder binder, Consumer<BindVerb.Report> onBound, JobSizes sizes, JobHolds.Listener plans) {
        return ExtenderVerbs.of(cluster, parser, nodeStates, policy, onScored, onAdvised, binder, onBound, bindLimits(),
                new WholeJobs.Settings(sizes, config.jobPlanDeadline(), plans, config.maxJobPods(),
                        planBudget(config.httpTimeout()), Set.copyOf(config.schedulerNames())), trust);
    }

    /**
     * How long a job's plan may take: three fifths of kube-scheduler's httpTimeout, so that the filter that plans answers
     * within the call with room for the rest of its work and the network.
     */
    static java.time.Duration planBudget(java.time.Duration httpTimeout) {
        return httpTimeout.multipliedBy(3).dividedBy(5);
    }
}
