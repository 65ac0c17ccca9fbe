package io.hetgpu.simulator;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * One policy's figures on one trace. Times in hours.
 *
 * @param meanJctHigh        mean job completion time (arrival to end) of high-priority jobs
 * @param p99JctHigh         its 99th percentile
 * @param meanJctOther       the same for every other job (neutral or low priority)
 * @param p99JctOther        its 99th percentile
 * @param meanJct            over all jobs
 * @param makespan           first arrival to last completion
 * @param meanQueueing       mean wait from arrival to start
 * @param gpuUtilisation     GPU-hours used / (GPUs x makespan)
 * @param highOnTopTier      share of high-priority GPU-hours on the cluster's top-tier cards
 * @param multiGpuOnNvlink   share of multi-GPU jobs whose GPUs form one NVLink-connected set
 * @param crossRackTb        ps/worker gradient traffic that crossed racks, in TB
 * @param neverPlaced        jobs no node could ever take
 * @param preemptions        evictions of jobs by preemption (a job evicted twice counts twice)
 * @param gpuHoursLost       GPU-hours that produced nothing kept: work since the last checkpoint at each eviction and
 *                           every restart's overhead
 * @param steadyJctHigh      mean JCT of the high-priority jobs of the steady-state window ({@link #STEADY_FROM} to
 *                           {@link #STEADY_TO}, as Gavel reports it); 0 for a shorter trace
 * @param steadyJct          the same over all jobs of the window
 * @param otherJctByGpus     mean JCT of the jobs that are not high priority, by GPUs per job: on a loaded cluster the
 *                           largest wait longest, and their wait is most of the overall mean
 * @param highJctByGpus      mean JCT of the high-priority jobs by GPUs per job: where they trail the ceiling
 * @param halfPlaced         what jobs spent with some of their pods placed while others waited
 * @param learned            what a policy that learns its speed table learned ({@link Learning.Figures#NONE} otherwise)
 */
public record Summary(String policy, int jobs, double meanJctHigh, double p99JctHigh, double meanJctOther, double p99JctOther,
                      double meanJct, double makespan, double meanQueueing, double gpuUtilisation, double highOnTopTier,
                      double multiGpuOnNvlink, double crossRackTb, int neverPlaced, int preemptions, double gpuHoursLost,
                      double steadyJctHigh, double steadyJct, SortedMap<Integer, Double> otherJctByGpus,
                      SortedMap<Integer, Double> highJctByGpus, HalfPlacedJobs halfPlaced, Learning.Figures learned) {

    /**
     * Jobs left half-placed: some of their pods bound and holding GPUs, cpu and memory while others wait for a node.
     *
     * @param jobs               jobs that ever waited half-placed (time passed with some of their pods placed, others not)
     * @param beyondDeadline     of those, the jobs whose placed pods held GPUs for longer at a stretch than a plan of the
     *                           extender holds them ({@link #DEADLINE_SECONDS}) before it lets them go
     * @param gpuHours           GPU-hours held by pods of jobs that were not complete
     * @param longestHours       the longest stretch any job's placed pods held GPUs while it was not complete
     */
    public record HalfPlacedJobs(int jobs, int beyondDeadline, double gpuHours, double longestHours) {

        public static final HalfPlacedJobs NONE = new HalfPlacedJobs(0, 0, 0, 0);

        /** The extender's plan deadline as shipped ({@code jobPlanDeadline}). */
        static final double DEADLINE_SECONDS = io.hetgpu.extender.service.WholeJobs.Settings.DEFAULT_DEADLINE.toSeconds();

        static HalfPlacedJobs of(List<JobRun.HalfPlaced> spent) {
            int jobs = 0;
            int beyond = 0;
            double gpuHours = 0;
            double longest = 0;
            for (var one : spent) {
                if (!one.stalled()) {
                    continue;
                }
                jobs++;
                beyond += one.longestHoldingGpusHours() * 3600 > DEADLINE_SECONDS ? 1 : 0;
                gpuHours += one.gpuHours();
                longest = Math.max(longest, one.longestHoldingGpusHours());
            }
            return new HalfPlacedJobs(jobs, beyond, gpuHours, longest);
        }
    }

    /** Of a policy that learns nothing. */
    public Summary(String policy, int jobs, double meanJctHigh, double p99JctHigh, double meanJctOther, double p99JctOther,
                   double meanJct, double makespan, double meanQueueing, double gpuUtilisation, double highOnTopTier,
                   double multiGpuOnNvlink, double crossRackTb, int neverPlaced, int preemptions, double gpuHoursLost,
                   double steadyJctHigh, double steadyJct, SortedMap<Integer, Double> otherJctByGpus,
                   SortedMap<Integer, Double> highJctByGpus, HalfPlacedJobs halfPlaced) {
        this(policy, jobs, meanJctHigh, p99JctHigh, meanJctOther, p99JctOther, meanJct, makespan, meanQueueing, gpuUtilisation,
                highOnTopTier, multiGpuOnNvlink, crossRackTb, neverPlaced, preemptions, gpuHoursLost, steadyJctHigh, steadyJct,
                otherJctByGpus, highJctByGpus, halfPlaced, Learning.Figures.NONE);
    }

    /** Without what jobs spent half-placed. */
    public Summary(String policy, int jobs, double meanJctHigh, double p99JctHigh, double meanJctOther, double p99JctOther,
                   double meanJct, double makespan, double meanQueueing, double gpuUtilisation, double highOnTopTier,
                   double multiGpuOnNvlink, double crossRackTb, int neverPlaced, int preemptions, double gpuHoursLost,
                   double steadyJctHigh, double steadyJct, SortedMap<Integer, Double> otherJctByGpus,
                   SortedMap<Integer, Double> highJctByGpus) {
        this(policy, jobs, meanJctHigh, p99JctHigh, meanJctOther, p99JctOther, meanJct, makespan, meanQueueing, gpuUtilisation,
                highOnTopTier, multiGpuOnNvlink, crossRackTb, neverPlaced, preemptions, gpuHoursLost, steadyJctHigh, steadyJct,
                otherJctByGpus, highJctByGpus, HalfPlacedJobs.NONE);
    }

    public Summary {
        otherJctByGpus = Collections.unmodifiableSortedMap(new TreeMap<>(otherJctByGpus));
        highJctByGpus = Collections.unmodifiableSortedMap(new TreeMap<>(highJctByGpus));
    }

    /** Without the breakdown by size. */
    public Summary(String policy, int jobs, double meanJctHigh, double p99JctHigh, double meanJctOther, double p99JctOther,
                   double meanJct, double makespan, double meanQueueing, double gpuUtilisation, double highOnTopTier,
                   double multiGpuOnNvlink, double crossRackTb, int neverPlaced, int preemptions, double gpuHoursLost,
                   double steadyJctHigh, double steadyJct) {
        this(policy, jobs, meanJctHigh, p99JctHigh, meanJctOther, p99JctOther, meanJct, makespan, meanQueueing, gpuUtilisation,
                highOnTopTier, multiGpuOnNvlink, crossRackTb, neverPlaced, preemptions, gpuHoursLost, steadyJctHigh, steadyJct,
                new TreeMap<>(), new TreeMap<>());
    }

    /** Gavel's steady-state window: the jobs of IDs 4,000 to 4,999, after the cluster has filled and before the trace drains. */
    static final int STEADY_FROM = 4_000;
    static final int STEADY_TO = 5_000;

    public static Summary of(Simulation.Result result, ClusterInventory inventory) {
        var runs = result.runs();
        Predicate<JobRun> high = run -> run.job().high();
        double first = runs.stream().mapToDouble(run -> run.job().arrival()).min().orElse(0);
        double last = runs.stream().mapToDouble(JobRun::end).max().orElse(0);
        double makespan = (last - first) / 3600;
        double gpuHours = runs.stream().mapToDouble(JobRun::gpuHours).sum();
        double highHours = runs.stream().filter(high).mapToDouble(JobRun::gpuHours).sum();
        double highTop = runs.stream().filter(high).mapToDouble(run -> run.topTierGpus() * (run.end() - run.start()) / 3600).sum();
        var multi = runs.stream().filter(run -> run.job().gpus() >= 2).toList();
        return new Summary(result.policy(), runs.size(),
                mean(runs, high), p99(runs, high), mean(runs, high.negate()), p99(runs, high.negate()), mean(runs, run -> true),
                makespan, runs.stream().mapToDouble(JobRun::queueingHours).average().orElse(0),
                makespan == 0 ? 0 : gpuHours / (inventory.gpuCount() * makespan),
                highHours == 0 ? 0 : highTop / highHours,
                multi.isEmpty() ? 0 : multi.stream().filter(JobRun::onNvlink).count() / (double) multi.size(),
                runs.stream().mapToDouble(JobRun::crossRackGb).sum() / 1000, result.neverPlaced(),
                runs.stream().mapToInt(JobRun::evictions).sum(), runs.stream().mapToDouble(JobRun::lostGpuHours).sum(),
                mean(runs, steady.and(high)), mean(runs, steady), meanByGpus(runs, high.negate()), meanByGpus(runs, high),
                HalfPlacedJobs.of(java.util.stream.Stream.concat(runs.stream().map(JobRun::halfPlaced), result.unfinished().stream()).toList()));
    }

    private static SortedMap<Integer, Double> meanByGpus(List<JobRun> runs, Predicate<JobRun> which) {
        return runs.stream().filter(which).collect(Collectors.groupingBy(run -> run.job().gpus(), TreeMap::new,
                Collectors.averagingDouble(JobRun::completionHours)));
    }

    /** Whether the run's job is in the steady-state window. */
    private static final Predicate<JobRun> steady = run -> run.job().id() >= STEADY_FROM && run.job().id() < STEADY_TO;

    /** The same figures under another name: what two policies that behaved alike have in common. */
    public Summary withPolicy(String name) {
        return new Summary(name, jobs, meanJctHigh, p99JctHigh, meanJctOther, p99JctOther, meanJct, makespan, meanQueueing, gpuUtilisation,
                highOnTopTier, multiGpuOnNvlink, crossRackTb, neverPlaced, preemptions, gpuHoursLost, steadyJctHigh, steadyJct,
                otherJctByGpus, highJctByGpus, halfPlaced, learned);
    }

    /** The same figures with what the policy learned. */
    public Summary withLearned(Learning.Figures figures) {
        return new Summary(policy, jobs, meanJctHigh, p99JctHigh, meanJctOther, p99JctOther, meanJct, makespan, meanQueueing, gpuUtilisation,
                highOnTopTier, multiGpuOnNvlink, crossRackTb, neverPlaced, preemptions, gpuHoursLost, steadyJctHigh, steadyJct,
                otherJctByGpus, highJctByGpus, halfPlaced, figures);
    }

    private static double mean(List<JobRun> runs, Predicate<JobRun> which) {
        return runs.stream().filter(which).mapToDouble(JobRun::completionHours).average().orElse(0);
    }

    /** Nearest-rank 99th percentile. */
    static double p99(List<JobRun> runs, Predicate<JobRun> which) {
        var values = runs.stream().filter(which).mapToDouble(JobRun::completionHours).toArray();
        if (values.length == 0) {
            return 0;
        }
        Arrays.sort(values);
        return values[Math.max(0, (int) Math.ceil(0.99 * values.length) - 1)];
    }
}
