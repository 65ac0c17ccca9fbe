package io.hetgpu.extender.http;

import io.hetgpu.extender.service.ExtenderService;

import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.TierPreference;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Request counts and latency per verb, placements by card tier, priority and links, free GPUs per tier, in Prometheus text format. */
public final class ExtenderMetrics {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private volatile Runnable beforeScrape = () -> { };
    /** Other counts refreshed at each scrape, besides the free GPUs. */
    private final java.util.List<Runnable> alsoBeforeScrape = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, AtomicLong> freeGpus = new ConcurrentHashMap<>();

    public Timer.Sample start() {
        return Timer.start(registry);
    }

    public void record(Timer.Sample sample, String verb, int status) {
        var key = new VerbStatus(verb, status);
        var timer = requests.get(key);
        if (timer == null) {
            timer = requests.computeIfAbsent(key, k -> Timer.builder("hetgpu.extender.requests")
                    .description("kube-scheduler extender calls by verb and HTTP status")
                    .tags("verb", k.verb(), "status", Integer.toString(k.status()))
                    .publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofMillis(1))
                    .maximumExpectedValue(Duration.ofSeconds(5))
                    .register(registry));
        }
        sample.stop(timer);
    }

    /*
     * The meters every filter and prioritize touches, kept once registered: a builder's register() makes and sorts the
     * tags and looks the meter up again, a few microseconds of a 100-node answer that takes tens.
     */
    private record VerbStatus(String verb, int status) {
    }

    private record Placement(String tier, String priority, String link) {
    }

    private final Map<VerbStatus, Timer> requests = new ConcurrentHashMap<>();
    private final Map<Placement, Counter> placements = new ConcurrentHashMap<>();

    /**
     * Counts where the best-scored node would put the pod: by the model of the cards it would get, the pod's priority
     * as the policy reads it (high, normal, low) and how its GPUs are linked (nvlink, pcie; one-gpu, no-gpu).
     */
    public void placed(PodRequest pod, ScoreTable table, PriorityThresholds thresholds) {
        // Every prioritize call comes here: the best row in one pass, not a sort of thousands of rows.
        var best = table.best();
        if (best == null || best.candidate() == null) {
            return;
        }
        var model = best.candidate().model();
        var set = best.candidate().set();
        String link = switch (set.size()) {
            case 0 -> "no-gpu";
            case 1 -> "one-gpu";
            default -> set.nvlinkConnected() ? "nvlink" : "pcie";
        };
        var key = new Placement(model.isEmpty() ? "cpu" : model, TierPreference.priorityLevel(pod, thresholds), link);
        var counter = placements.get(key);
        if (counter == null) {
            counter = placements.computeIfAbsent(key, k -> Counter.builder("hetgpu.extender.placements")
                    .description("best-scored placements by card model (cpu for pods without GPUs), priority and GPU links")
                    .tag("tier", k.tier())
                    .tag("priority", k.priority())
                    .tag("link", k.link())
                    .register(registry));
        }
        counter.increment();
    }

    /**
     * Free GPUs per card model, counted from the cluster view at each scrape (every few seconds at most). A model no
     * longer in the cluster reads 0. The counts live in this object's map, which the gauges read: a gauge holds its
     * object only weakly, and a count made for one scrape would be collected before the next.
     */
    public void watchFreeGpus(ExtenderService service) {
        beforeScrape = () -> {
            var counted = service.freeGpusByModel();
            freeGpus.forEach((tier, free) -> free.set(counted.getOrDefault(tier, 0)));
            counted.forEach((tier, free) -> freeGpus.computeIfAbsent(tier, this::freeGpusGauge).set(free));
        };
    }

    private AtomicLong freeGpusGauge(String tier) {
        var free = new AtomicLong();
        io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.free.gpus", free, AtomicLong::get)
                .description("free healthy GPUs of each card model in the cluster, not held or promised to a pod")
                .tag("tier", tier)
                .register(registry);
        return free;
    }

    /**
     * The preempt verb's answers: candidate nodes kept and refused, the victims and the GPU-hours of work at stake on
     * the kept ones (kube-scheduler then evicts on one of them).
     */
    public void preemption(io.hetgpu.extender.service.PreemptionAdvice advice) {
        Counter.builder("hetgpu.extender.preemption.candidates").description("candidate nodes the preempt verb kept or refused")
                .tag("outcome", "kept").register(registry).increment(advice.kept().size());
        Counter.builder("hetgpu.extender.preemption.candidates").description("candidate nodes the preempt verb kept or refused")
                .tag("outcome", "refused").register(registry).increment(advice.refused().size());
        Counter.builder("hetgpu.extender.preemption.victims").description("pods on the candidate nodes the preempt verb kept")
                .register(registry).increment(advice.kept().stream().mapToInt(k -> k.victims()).sum());
        Counter.builder("hetgpu.extender.preemption.gpu.hours.at.stake")
                .description("GPU-hours since their last checkpoint of the pods on the kept candidate nodes")
                .register(registry).increment(advice.kept().stream().mapToLong(k -> k.gpuSecondsLost()).sum() / 3600.0);
    }

    /** The high-priority reserve as the service last saw it: free top-tier GPUs, and calls it held a pod back. */
    public void watchReserve(ExtenderService service) {
        io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.top.tier.free.gpus", service, s -> s.lastHeadroom().free())
                .description("free GPUs of the cluster's top tier, as last counted for highPriorityReserve")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.reserve.held", service, ExtenderService::heldByReserve)
                .description("filter and prioritize calls in which highPriorityReserve kept top-tier GPUs from a pod")
                .register(registry);
    }

    /**
     * Node versions found unreadable, as a counter rather than a gauge of nodes unreadable now: it rises with
     * each warning logged (once per node resourceVersion), so {@code increase(...) > 0} alerts on new damage,
     * and it stays true where the extender never hears that a node went away (nodes sent whole in requests).
     */
    public void watchNodes(io.hetgpu.extender.model.NodeStateFactory nodes) {
        io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.unreadable.nodes", nodes,
                        io.hetgpu.extender.model.NodeStateFactory::unreadableNodeVersions)
                .description("node versions whose GPU annotations could not be read: GPU pods are kept off them")
                .register(registry);
    }

    /** Pods whose {@code hetgpu.io/gpu-devices} record was not trusted, by why: each pod counted once per reason. */
    public void watchUntrustedRecords(io.hetgpu.extender.trust.UntrustedRecords refusals) {
        for (var reason : io.hetgpu.extender.trust.Distrust.values()) {
            io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.untrusted.records", refusals, r -> r.count(reason))
                    .description("pods whose hetgpu.io/gpu-devices record was not trusted (not signed by the extender, or not "
                            + "making sense for the pod): it holds no GPUs")
                    .tag("reason", reason.tag())
                    .register(registry);
        }
    }

    /**
     * Request bytes taken from the bytes in flight now: near the limit, callers start to get 429s. The supplier is held
     * strongly: a gauge keeps only a weak reference to its object, and a method reference nothing else holds was
     * collected at the first GC, after which the gauge read NaN.
     */
    public void watchBytesInFlight(java.util.function.LongSupplier taken) {
        io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.request.bytes.in.flight", taken, supplier -> supplier.getAsLong())
                .description("request body bytes the extender holds or has admitted, against its bytesInFlight limit")
                .baseUnit("bytes")
                .strongReference(true)
                .register(registry);
    }

    /** A request refused with 429 because the bytes in flight were at their limit. */
    public void refused(String verb) {
        Counter.builder("hetgpu.extender.requests.refused")
                .description("requests refused with 429 because too many request bytes were in flight")
                .tag("verb", verb)
                .register(registry)
                .increment();
    }

    /**
     * One bind verb call: counted by outcome ({@code hetgpu_extender_binds_total}) and timed from the arguments read to
     * the answer, the API server's three calls included ({@code hetgpu_extender_bind_duration_seconds}).
     */
    public void bound(io.hetgpu.extender.service.BindVerb.Report report) {
        Counter.builder("hetgpu.extender.binds")
                .description("bind verb calls by outcome: bound, bound_unrecorded, no_fit, conflict, timed_out, failed")
                .tag("outcome", report.outcome().tag())
                .register(registry)
                .increment();
        Timer.builder("hetgpu.extender.bind.duration")
                .description("bind verb calls: choosing the devices, recording them on the pod and creating the Binding")
                .tag("outcome", report.outcome().tag())
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry)
                .record(report.took());
    }

    /** Verbs refused because the caches had not synced yet, per verb. */
    public void watchGate(io.hetgpu.extender.service.CacheGate gate) {
        for (var verb : io.hetgpu.extender.service.CacheGate.VERBS) {
            io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.not.synced.refusals", gate, g -> g.refused(verb))
                    .description("calls refused because the extender's caches had not synced with the API server yet")
                    .tag("verb", verb).register(registry);
        }
    }

    /**
     * An answer that could not be written (the caller had closed the connection): kube-scheduler saw a failed call
     * ({@code hetgpu_extender_answers_failed_total}), whatever the verb's own status says.
     */
    public void answerFailed(String verb) {
        Counter.builder("hetgpu.extender.answers.failed")
                .description("answers that could not be written because the connection was gone, by verb (other: any other path)")
                .tag("verb", verb)
                .register(registry)
                .increment();
    }

    public String scrape() {
        beforeScrape.run();
        alsoBeforeScrape.forEach(Runnable::run);
        return registry.scrape();
    }

    /** One row of the learned table as the gauges show it. */
    private record LearnedRow(String workload, String card) {
    }

    /** What a row's two gauges read: set at each scrape, held here because a gauge holds its object only weakly. */
    private static final class LearnedFigure {
        volatile double throughputPerGpu;
        volatile double samples;
        final java.util.List<io.micrometer.core.instrument.Meter> meters = new java.util.ArrayList<>();
    }

    private final Map<LearnedRow, LearnedFigure> learnedRows = new ConcurrentHashMap<>();

    /**
     * What the extender has learned, per workload class and card model, read from the learner at each scrape: the
     * throughput per GPU the policy uses and the samples behind it, for the cards a class has run on (the priors that
     * fill the others are one per card model the priors know, and say nothing measured: they are left out); and the runs
     * it heard of, kept, refused by why, and dropped. A row the learner no longer has (its class dropped as the least
     * recently seen) is removed, so the series are as bounded as the learner (maxClasses times the card models run on).
     */
    public void watchLearning(io.hetgpu.extender.cluster.ThroughputLearning learning) {
        io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.learning.samples.accepted", learning,
                        io.hetgpu.extender.cluster.ThroughputLearning::accepted)
                .description("runs of pods that ended kept by the throughput learner as measurements").register(registry);
        for (var reason : io.hetgpu.extender.cluster.ThroughputLearning.RefusalReason.values()) {
            io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.learning.samples.refused", learning, l -> l.refused(reason))
                    .description("pods naming a workload class whose run was not kept as a measurement, by the field that ruled it out")
                    .tag("reason", reason.tag()).register(registry);
        }
        io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.learning.pods.dropped", learning,
                        io.hetgpu.extender.cluster.ThroughputLearning::dropped)
                .description("pods that ended while too many were waiting to be learned from: not learned from").register(registry);
        alsoBeforeScrape.add(() -> showLearned(learning.learner().table()));
    }

    private void showLearned(io.hetgpu.extender.throughput.LearnedTable table) {
        var now = new java.util.HashSet<LearnedRow>();
        table.byClass().forEach((workload, cards) -> cards.forEach((card, speed) -> {
            if (speed.prior()) {
                return;
            }
            var row = new LearnedRow(workload, card);
            now.add(row);
            var figure = learnedRows.computeIfAbsent(row, this::learnedGauges);
            figure.throughputPerGpu = speed.throughputPerGpu();
            figure.samples = speed.samples();
        }));
        for (var gone : learnedRows.keySet()) {
            if (!now.contains(gone)) {
                var figure = learnedRows.remove(gone);
                if (figure != null) {
                    figure.meters.forEach(registry::remove);
                }
            }
        }
    }

    private LearnedFigure learnedGauges(LearnedRow row) {
        var figure = new LearnedFigure();
        var tags = io.micrometer.core.instrument.Tags.of("workload", row.workload(), "card", row.card());
        figure.meters.add(io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.learned.throughput", figure, f -> f.throughputPerGpu)
                .description("learned throughput per GPU of a workload class on a card model, in the class's own unit per second")
                .tags(tags).register(registry));
        figure.meters.add(io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.learned.samples", figure, f -> f.samples)
                .description("runs behind a learned throughput").tags(tags).register(registry));
        return figure;
    }

    /** Whole jobs: plans made, plans ended by how, and what live plans hold. */
    public io.hetgpu.extender.job.JobHolds.Listener jobPlans() {
        return new io.hetgpu.extender.job.JobHolds.Listener() {
            @Override
            public void ended(io.hetgpu.extender.job.JobHolds.HeldPlan plan, io.hetgpu.extender.job.JobHolds.Ending ending, String why) {
                Counter.builder("hetgpu.extender.job.plans.ended").description("job plans ended: every pod bound, deadline passed, or released")
                        .tag("ending", ending.name().toLowerCase(java.util.Locale.ROOT)).register(registry).increment();
            }

            @Override
            public void held(io.hetgpu.extender.job.JobHolds.HeldPlan plan) {
                Counter.builder("hetgpu.extender.job.plans").description("job plans made (every pod of a job placed at once)")
                        .register(registry).increment();
            }
        };
    }

    /** With jobHeadroom: filter calls in which it kept a job of several pods, or a pod of several GPUs, waiting for room. */
    public void watchJobHeadroom(io.hetgpu.extender.service.WholeJobs jobs) {
        io.micrometer.core.instrument.FunctionCounter.builder("hetgpu.extender.job.headroom.waits", jobs,
                        io.hetgpu.extender.service.WholeJobs::heldBackForHeadroom)
                .description("filter calls in which jobHeadroom kept a job of several pods, or a pod of several GPUs, waiting for room").register(registry);
    }

    /** The GPUs the live job plans hold now, for pods not bound yet ({@code gpusHeld} counts them when scraped). */
    public void watchPlans(java.util.function.IntSupplier gpusHeld) {
        // Held strongly: the gauge is the only holder of the supplier, and a gauge's object is held weakly by default.
        io.micrometer.core.instrument.Gauge.builder("hetgpu.extender.job.plan.gpus.held", gpusHeld, java.util.function.IntSupplier::getAsInt)
                .strongReference(true).description("GPUs held by job plans for pods not bound yet").register(registry);
    }
}
