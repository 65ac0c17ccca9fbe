package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.throughput.Observation;
import io.hetgpu.extender.throughput.PodRun;
import io.hetgpu.extender.throughput.StateFit;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.WorkSample;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extender's learner fed and kept: each pod of a hetgpu scheduler that ends is read into a {@link WorkSample} and
 * observed once per pod UID; the learned state is read from the ConfigMap {@value LearnedThroughputsConfigMap#NAME} at
 * start and written back when it has changed, at most once per {@link Settings#persistEvery}, and once more at a stop.
 *
 * <p>Everything here runs on one thread of its own ("throughput-learning"): the informer's thread only hands a pod over
 * (a bounded number waiting, the rest dropped and counted), and the verbs never wait for any of it; they read the
 * learner's table, which changes under its own lock.
 *
 * <p>Order at start. The verbs answer once the informers have synced, whether or not the ConfigMap has been read: until
 * then the policy ranks by the configured table and the priors, as on a first start. Pods that end before the read are
 * learned from once it is done, if they are still there (a pod deleted meanwhile is missed): nothing is observed until the read is done (a failed read is retried, 1 s doubling to 32 s, and nothing is
 * written meanwhile, so an API server that is away never makes an empty table overwrite a learned one); then every ended
 * pod in the informer's store is observed, skipping those that ended at or before the instant the ConfigMap says it has
 * learned through (they are in the state read back). A missing ConfigMap, or one whose data is not a state, is a clean
 * start, said once in the log with the reason; the next write replaces it.
 *
 * <p>Replicas. Every replica follows the same informer events, so their states differ only by the runs one saw and
 * the other did not (one was starting). A write that loses a race (409) reads the ConfigMap again and keeps the newer
 * of the two by {@value LearnedThroughputsConfigMap#LEARNED_THROUGH}: the other replica's when it has learned through
 * a run at least as recent as ours (this learner then restores it, so replicas converge), else ours, written over it
 * with its resourceVersion. A document is always written whole, never merged field by field, so it is never corrupt.
 */
public final class ThroughputLearning implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ThroughputLearning.class);
    private static final long MAX_RETRY_MS = 32_000;

    /**
     * @param persistEvery  the least time between two writes of the ConfigMap
     * @param maxPending    pods handed over by the informer and not yet observed; more are dropped (and counted)
     * @param rememberedUids pod UIDs remembered as observed; the oldest forgotten beyond it
     * @param stopFlush     how long a stop waits for the last write
     */
    public record Settings(Duration persistEvery, int maxPending, int rememberedUids, Duration stopFlush) {
        /** A minute between writes: a learned figure moves with runs that take minutes to hours. */
        public static final Settings DEFAULTS = new Settings(Duration.ofSeconds(60), 4096, 65_536, Duration.ofSeconds(5));

        public Settings withPersistEvery(Duration every) {
            return new Settings(every, maxPending, rememberedUids, stopFlush);
        }

        public Settings withMaxPending(int pods) {
            return new Settings(persistEvery, pods, rememberedUids, stopFlush);
        }
    }

    /** A pod's run as the learner's reader makes it: a sample, or why the pod is not one. */
    public sealed interface Reading {
        /** A measurement to judge. */
        record Run(WorkSample sample) implements Reading {
        }

        /** A pod that names a class but whose run cannot be measured; the reason names the field and value. */
        record NotMeasured(String reason) implements Reading {
        }

        /** A pod that names no workload class: nothing to learn, nothing to count. */
        record NoClass() implements Reading {
        }
    }

    /** Reads a pod that ended, run on {@code cardModel} with {@code gpus} GPUs. Pure. */
    @FunctionalInterface
    public interface RunReader {
        Reading read(Pod pod, String cardModel, int gpus);
    }

    /** The model of the cards a pod held on its node (null when the node is gone). Pure. */
    @FunctionalInterface
    public interface CardsOf {
        EndedPods.Cards of(Pod pod, int gpus, NodeFacts node);
    }

    /**
     * How the pods the learner hears of are judged: whose they are ({@code schedulerNames}), where their node is, on what
     * cards they ran, how many GPUs they asked, and what their run is.
     */
    public record Sources(java.util.Set<String> schedulerNames, Function<String, NodeFacts> nodes, CardsOf cards,
                          java.util.function.ToIntFunction<Pod> gpus, RunReader runs) {
        public Sources {
            schedulerNames = java.util.Set.copyOf(schedulerNames);
        }
    }

    /**
     * The extender's sources: pods of {@code schedulerNames} as {@code view} holds them, their GPU count as {@code parser}
     * reads it, their cards by their trusted record or their node's inventory, their runs by {@code runs}.
     */
    public static Sources following(InformerClusterView view, io.hetgpu.extender.model.PodRequestParser parser,
                                    io.hetgpu.gpu.tier.CardCatalog catalog, io.hetgpu.extender.trust.RecordTrust trust,
                                    java.util.Set<String> schedulerNames, RunReader runs) {
        var reader = new io.hetgpu.extender.model.NodeGpuReader(catalog, parser.resourceName());
        return new Sources(schedulerNames, view::node, (pod, gpus, node) -> EndedPods.cardsOf(pod, gpus, node, reader, trust),
                pod -> BoundPods.gpuCount(pod, parser), runs);
    }

    /**
     * The throughput package's reader ({@link PodRun}): a pod that names no {@code hetgpu.io/workload} is no run to count,
     * one that names a class and cannot be measured is refused with PodRun's reason.
     */
    public static final RunReader POD_RUNS = (pod, cardModel, gpus) -> {
        var annotations = pod.getMetadata().getAnnotations();
        if (annotations == null || annotations.getOrDefault(HetgpuKeys.POD_WORKLOAD, "").isBlank()) {
            return new Reading.NoClass();
        }
        return switch (PodRun.of(pod, cardModel, gpus)) {
            case PodRun.Outcome.Run run -> new Reading.Run(run.sample());
            case PodRun.Outcome.NotARun not -> new Reading.NotMeasured(not.reason());
        };
    };

    private final ThroughputLearner learner;
    private final LearnedThroughputsConfigMap store;
    private final Sources sources;
    private final Settings settings;
    private final ScheduledThreadPoolExecutor thread;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicLong dropped = new AtomicLong();
    /** Refusals by {@link RefusalReason}, for the metrics. */
    private final Map<RefusalReason, AtomicLong> refused = new ConcurrentHashMap<>();
    private final AtomicLong accepted = new AtomicLong();
    /** The pods in the informer's store now, for the scan after the read. */
    private volatile Supplier<List<Pod>> podsNow = List::of;

    // Touched on the learning thread only.
    private final LinkedHashMap<String, Boolean> seen;
    private Optional<String> resourceVersion = Optional.empty();
    /** What the state read back had learned through: runs that ended by then are in it. */
    private Instant restoredThrough = Instant.EPOCH;
    /** The end of the newest run observed, or read back. */
    private Instant learnedThrough = Instant.EPOCH;
    private long writtenVersion = -1;
    /** How the last write was made to fit the ConfigMap: said when it changes, not at every write. */
    private String lastFit = "whole";
    private int readFailures;

    private volatile boolean restored;
    private volatile boolean closed;

    public ThroughputLearning(ThroughputLearner learner, LearnedThroughputsConfigMap store, Sources sources, Settings settings) {
        this.learner = learner;
        this.store = store;
        this.sources = sources;
        this.settings = settings;
        this.seen = new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > settings.rememberedUids();
            }
        };
        for (var reason : RefusalReason.values()) {
            refused.put(reason, new AtomicLong());
        }
        this.thread = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().daemon().name("throughput-learning").factory());
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Reads the ConfigMap (retrying until it answers), then observes the pods {@code pods} holds that ended. */
    public void start(Supplier<List<Pod>> pods) {
        this.podsNow = pods;
        thread.execute(this::readBack);
    }

    public ThroughputLearner learner() {
        return learner;
    }

    /** Whether the stored state has been read (or found absent or unusable) and pods are being observed. */
    public boolean restored() {
        return restored;
    }

    /**
     * A pod as the informer saw it added or changed: handed to the learning thread if it is a run that ended. Never blocks:
     * until the ConfigMap is read it is left for the scan that follows, and beyond {@link Settings#maxPending} waiting it
     * is dropped.
     */
    public void seen(Pod pod) {
        if (!restored || closed || !EndedPods.endedRun(pod, sources.schedulerNames())) {
            return;
        }
        if (pending.incrementAndGet() > settings.maxPending()) {
            pending.decrementAndGet();
            dropped.incrementAndGet();
            return;
        }
        try {
            thread.execute(() -> {
                pending.decrementAndGet();
                observe(pod);
            });
        } catch (RejectedExecutionException e) {
            pending.decrementAndGet();
        }
    }

    /** Runs handed over and dropped because too many were waiting. */
    public long dropped() {
        return dropped.get();
    }

    /** Samples the learner kept. */
    public long accepted() {
        return accepted.get();
    }

    /** Pods naming a class whose run was not kept as a measurement, by why. */
    public long refused(RefusalReason reason) {
        return refused.get(reason).get();
    }

    private void readBack() {
        if (closed) {
            return;
        }
        LearnedThroughputsConfigMap.Stored stored;
        try {
            stored = store.read();
        } catch (KubernetesClientException e) {
            long waitMs = Math.min(MAX_RETRY_MS, 1000L << Math.min(readFailures, 5));
            readFailures++;
            LOG.warn("reading the learned throughputs from ConfigMap {} failed, retrying in {} s (nothing learned is written "
                    + "until it is read): {}", store.where(), waitMs / 1000, ApiFaults.describe(e));
            schedule(this::readBack, Duration.ofMillis(waitMs));
            return;
        }
        switch (stored) {
            case LearnedThroughputsConfigMap.Stored.Absent absent -> {
                LOG.info("no ConfigMap {}: learning workload throughputs from scratch", store.where());
                // Made empty at once rather than at the first run learned, hours later: a missing permission shows now.
                writtenVersion = -1;
            }
            case LearnedThroughputsConfigMap.Stored.Unusable bad -> {
                resourceVersion = Optional.ofNullable(bad.resourceVersion());
                LOG.warn("ConfigMap {} ignored, learning workload throughputs from scratch (it is replaced at the next write): {}",
                        store.where(), bad.reason());
            }
            case LearnedThroughputsConfigMap.Stored.Found found -> {
                learner.restore(found.state());
                resourceVersion = Optional.ofNullable(found.resourceVersion());
                restoredThrough = found.learnedThrough();
                learnedThrough = found.learnedThrough();
                writtenVersion = learner.table().version();
                LOG.info("learned workload throughputs read from ConfigMap {} ({} classes, through {})", store.where(),
                        found.state().classes().size(), found.learnedThrough());
            }
        }
        restored = true;
        // Pods that ended before now: the informer's store has them (those it has not listed yet come as events).
        for (var pod : podsNow.get()) {
            if (EndedPods.endedRun(pod, sources.schedulerNames())) {
                observe(pod);
            }
        }
        long every = Math.max(1, settings.persistEvery().toMillis());
        thread.scheduleWithFixedDelay(this::persistQuietly, stored instanceof LearnedThroughputsConfigMap.Stored.Found ? every : 0,
                every, TimeUnit.MILLISECONDS);
    }

    private void schedule(Runnable task, Duration after) {
        try {
            thread.schedule(task, after.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Stopped meanwhile.
        }
    }

    /** One pod that ended, on the learning thread. */
    void observe(Pod pod) {
        var uid = pod.getMetadata().getUid();
        if (seen.containsKey(uid)) {
            return;
        }
        seen.put(uid, Boolean.TRUE);
        int gpus = sources.gpus().applyAsInt(pod);
        if (gpus < 1) {
            return;
        }
        var node = sources.nodes().apply(pod.getSpec().getNodeName());
        var cards = sources.cards().of(pod, gpus, node);
        var reading = switch (cards) {
            case EndedPods.Cards.Model model -> sources.runs().read(pod, model.model(), gpus);
            case EndedPods.Cards.Unknown unknown -> {
                // Only worth a word for a pod that names a class.
                var asRun = sources.runs().read(pod, "", gpus);
                yield asRun instanceof Reading.NoClass ? asRun : new Reading.NotMeasured("cards: " + unknown.reason());
            }
        };
        switch (reading) {
            case Reading.NoClass none -> {
            }
            case Reading.NotMeasured not -> refuse(pod, not.reason());
            case Reading.Run run -> {
                var sample = run.sample();
                if (!sample.endedAt().isAfter(restoredThrough)) {
                    // Counted before the restart: the state read back holds it.
                    return;
                }
                if (sample.endedAt().isAfter(learnedThrough)) {
                    learnedThrough = sample.endedAt();
                }
                switch (learner.observe(sample)) {
                    case Observation.Accepted kept -> {
                        accepted.incrementAndGet();
                        LOG.debug("pod {}/{}: learned {} per GPU-second for workload {} on {}", pod.getMetadata().getNamespace(),
                                pod.getMetadata().getName(), kept.throughputPerGpu(), kept.workloadClass(), kept.cardModel());
                    }
                    case Observation.Refused refusal -> refuse(pod, refusal.reason());
                }
            }
        }
    }

    private void refuse(Pod pod, String reason) {
        refused.get(RefusalReason.of(reason)).incrementAndGet();
        LOG.debug("pod {}/{}: not a throughput measurement: {}", pod.getMetadata().getNamespace(), pod.getMetadata().getName(), reason);
    }

    private void persistQuietly() {
        try {
            persist();
        } catch (RuntimeException e) {
            LOG.warn("writing the learned throughputs to ConfigMap {} failed, trying again in {} s: {}", store.where(),
                    settings.persistEvery().toSeconds(), ApiFaults.describe(e));
        }
    }

    /** Writes the state if it changed since the last write or read; a conflict is settled as the class comment says. */
    void persist() {
        if (!restored) {
            return;
        }
        long version = learner.table().version();
        if (version == writtenVersion) {
            return;
        }
        var fitted = StateFit.fit(learner.state(), LearnedThroughputsConfigMap.MAX_DATA_CHARS, learner.settings());
        if (!fitted.how().equals(lastFit)) {
            LOG.info("the learned throughputs fit ConfigMap {} ({} characters) as: {}", store.where(), fitted.json().length(), fitted.how());
            lastFit = fitted.how();
        }
        var json = fitted.json();
        var written = store.write(json, learnedThrough, resourceVersion);
        if (written instanceof LearnedThroughputsConfigMap.Written.Conflict conflict) {
            LOG.info("ConfigMap {} was written by another replica meanwhile ({}): keeping the newer", store.where(), conflict.message());
            var theirs = store.read();
            switch (theirs) {
                case LearnedThroughputsConfigMap.Stored.Found found when !found.learnedThrough().isBefore(learnedThrough) -> {
                    learner.restore(found.state());
                    resourceVersion = Optional.ofNullable(found.resourceVersion());
                    learnedThrough = found.learnedThrough();
                    writtenVersion = learner.table().version();
                    return;
                }
                case LearnedThroughputsConfigMap.Stored.Found found -> resourceVersion = Optional.ofNullable(found.resourceVersion());
                case LearnedThroughputsConfigMap.Stored.Unusable bad -> resourceVersion = Optional.ofNullable(bad.resourceVersion());
                case LearnedThroughputsConfigMap.Stored.Absent absent -> resourceVersion = Optional.empty();
            }
            // Ours is newer: written over theirs, once; another conflict waits for the next turn.
            written = store.write(json, learnedThrough, resourceVersion);
            if (written instanceof LearnedThroughputsConfigMap.Written.Conflict again) {
                resourceVersion = Optional.empty();
                LOG.info("ConfigMap {} changed again meanwhile: written at the next turn ({})", store.where(), again.message());
                return;
            }
        }
        resourceVersion = Optional.of(((LearnedThroughputsConfigMap.Written.Done) written).resourceVersion());
        writtenVersion = version;
    }

    /** Stops observing; writes what changed since the last write, waiting at most {@link Settings#stopFlush}. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            var last = thread.submit(this::persistQuietly);
            thread.shutdown();
            last.get(settings.stopFlush().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
            LOG.warn("the learned throughputs were not written at the stop: {}", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            thread.shutdownNow();
        }
    }

    /** Why a run was not kept, as a metric's label: the field the reason names, from a fixed set. */
    public enum RefusalReason {
        /** The cards it held could not be told (a node of several models without a trusted record, a node gone). */
        CARDS("cards"),
        /** Not Succeeded, and not evicted either: it may have crashed at any point. */
        PHASE("phase", "status"),
        /** No usable run time: no terminated container, times missing, or shorter than minRunSeconds. */
        RUN_TIME("run time", "containerStatuses"),
        /** No work reported or declared, or not a number, or evicted without a report. */
        WORK("work", HetgpuKeys.POD_WORK, "termination message", "evicted"),
        OUTLIER("outlier"), THROUGHPUT("throughput"), WORKLOAD_CLASS("workload class"), NAMESPACE("namespace"),
        CARD_MODEL("card model"), GPUS("gpus"), OFF("learning is off"), OTHER();

        private final List<String> prefixes;

        RefusalReason(String... prefixes) {
            this.prefixes = List.of(prefixes);
        }

        /** The label value: {@code run_time}, {@code outlier}… */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The reason's kind by the field it starts with ("run time: 30 s is below…"), {@link #OTHER} for any other. */
        public static RefusalReason of(String reason) {
            for (var kind : values()) {
                for (var prefix : kind.prefixes) {
                    if (reason.startsWith(prefix)) {
                        return kind;
                    }
                }
            }
            return OTHER;
        }
    }
}
