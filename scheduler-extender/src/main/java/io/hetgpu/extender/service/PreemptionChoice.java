package io.hetgpu.extender.service;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;

/**
 * Which of kube-scheduler's preemption candidates hetgpu keeps, among those whose victims free a GPU set the pod can
 * use: the ones that break the fewest PodDisruptionBudgets (kube-scheduler's own first criterion); for a pod that
 * wants the newest cards, the candidates that give it the newest tier; among those, the ones
 * closest to the pod's job (on a node of another of its pods, then in its rack, then its zone, and with room for its
 * pods still waiting: a worker evicting its way next to the job's other worker keeps their traffic off the network);
 * among those, the ones where pods the preemptor cannot evict already hold the most GPUs, as long as that costs at most
 * {@link #GATHERING_SLACK_GPU_SECONDS} more lost work than the cheapest (urgent pods gather on few nodes, so that the
 * other nodes stay wholly evictable for the next urgent gang or 8-GPU pod); among those, the ones whose eviction
 * destroys the least work, in GPU-seconds since each victim last saved it (its {@code hetgpu.io/checkpointed-at},
 * else its start). kube-scheduler then picks among what is kept, by its own rules.
 */
public final class PreemptionChoice {

    /**
     * How much more lost work (GPU-seconds: 10 GPU-minutes) gathering urgent pods may cost over the cheapest eviction.
     * Chosen in the simulator on seeds 1-10 (300, 600, 1,200, 3,600 and no limit): from 1,200 up, hetgpu's evictions
     * lose more GPU-hours than kube-scheduler's own on 4 to 10 seeds of 10; 300 helps the urgent jobs less
     * (simulator/README.md, "How the settings were chosen").
     */
    public static final long GATHERING_SLACK_GPU_SECONDS = 600;

    /**
     * One candidate.
     *
     * @param tierRank       the weakest card's tier in the set the pod would get; -1 when unknown (a node hetgpu cannot judge)
     * @param closeness      the node's mean closeness to the job's other pods ({@link io.hetgpu.extender.policy.Proximity})
     * @param gpuSecondsLost work the eviction destroys
     * @param pdbViolations  the PodDisruptionBudgets its evictions would break, as kube-scheduler counted them
     * @param keptGpus       GPUs on the node held by pods the preemptor cannot evict (of its priority or above)
     */
    public record Option(String node, int tierRank, double closeness, long gpuSecondsLost, long pdbViolations, int keptGpus) {

        public Option(String node, int tierRank, double closeness, long gpuSecondsLost, long pdbViolations) {
            this(node, tierRank, closeness, gpuSecondsLost, pdbViolations, 0);
        }

        public Option(String node, int tierRank, double closeness, long gpuSecondsLost) {
            this(node, tierRank, closeness, gpuSecondsLost, 0);
        }
    }

    private PreemptionChoice() {
    }

    /** The newest tier any option gives (-1 when none can be judged). */
    static int bestTier(List<Option> options) {
        return options.stream().mapToInt(Option::tierRank).max().orElse(-1);
    }

    /** The fewest PodDisruptionBudget violations any option has. */
    static long fewestViolations(List<Option> options) {
        return options.stream().mapToLong(Option::pdbViolations).min().orElse(0);
    }

    /** The closest any option is to the job's other pods. */
    static double closest(List<Option> options) {
        return options.stream().mapToDouble(Option::closeness).max().orElse(0);
    }

    /**
     * The options within {@link #GATHERING_SLACK_GPU_SECONDS} of the least work lost whose nodes keep the most GPUs of
     * pods the preemptor cannot evict.
     */
    static List<Option> gathering(List<Option> options) {
        var affordable = withinSlack(options);
        int most = affordable.stream().mapToInt(Option::keptGpus).max().orElse(0);
        return affordable.stream().filter(option -> option.keptGpus() == most).toList();
    }

    /** The options that lose at most {@link #GATHERING_SLACK_GPU_SECONDS} more work than the cheapest: those gathering may pick. */
    static List<Option> withinSlack(List<Option> options) {
        long least = options.stream().mapToLong(Option::gpuSecondsLost).min().orElse(0);
        return options.stream().filter(option -> option.gpuSecondsLost() <= least + GATHERING_SLACK_GPU_SECONDS).toList();
    }

    public static List<String> keep(List<Option> options, boolean wantsNewest) {
        // kube-scheduler's first criterion, kept first: an admin's disruption budget outranks the pod's wish for cards.
        long fewest = fewestViolations(options);
        var left = options.stream().filter(option -> option.pdbViolations() == fewest).toList();
        if (wantsNewest) {
            int best = bestTier(left);
            left = left.stream().filter(option -> option.tierRank() == best).toList();
        }
        double closest = closest(left);
        left = left.stream().filter(option -> option.closeness() == closest).toList();
        left = gathering(left);
        long least = left.stream().mapToLong(Option::gpuSecondsLost).min().orElse(0);
        return left.stream().filter(option -> option.gpuSecondsLost() == least).map(Option::node).toList();
    }

    /**
     * When a victim last saved its work: its {@code hetgpu.io/checkpointed-at} when that is a valid RFC 3339 time, held
     * between its start and now, else its start, else now (a pod not known to have started has done nothing to lose). Pod
     * authors write the annotation, so it may not claim more than the pod has run: a checkpoint from before its start
     * ({@code 1970-01-01T00:00:00Z} would be 56 years of lost work, and make preemption evict other teams' pods instead)
     * counts from its start, and one in the future counts as just saved.
     *
     * @param startTime when the pod started ({@link JobPreemption#startOf}); null when it has not
     */
    public static Instant lastSaved(Map<String, String> annotations, String startTime, Instant now) {
        var started = parse(startTime);
        if (started == null || started.isAfter(now)) {
            return now;
        }
        var checkpoint = parse(annotations.get(io.hetgpu.gpu.inventory.HetgpuKeys.POD_CHECKPOINTED_AT));
        if (checkpoint == null || checkpoint.isBefore(started)) {
            return started;
        }
        return checkpoint.isAfter(now) ? now : checkpoint;
    }

    /** GPU-seconds a victim holding {@code gpus} loses when evicted now. */
    public static long gpuSecondsLost(int gpus, Instant lastSaved, Instant now) {
        return gpus * Math.max(0, Duration.between(lastSaved, now).toSeconds());
    }

    private static Instant parse(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return java.time.OffsetDateTime.parse(text.strip()).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
