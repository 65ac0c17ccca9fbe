package io.hetgpu.simulator;

import io.hetgpu.extender.throughput.WorkSample;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * How a simulated job reports the work it did when its pods end, as a real one writes its step count to its
 * termination message: the true work of the run (what the simulation's speed model made it do) with measurement
 * noise, and now and then a report that is no measurement at all, which a learner must refuse.
 *
 * <p>One sample per pod that held GPUs, not one per job: the extender sees pods end, one termination message each. A
 * pod's share of the job's work is its share of the job's GPUs (the workers of a data-parallel job step together), so
 * the per-GPU throughput a sample shows is the job's whatever the number of pods. A pod's card is the slowest of its
 * GPUs; the job runs at the pace of its slowest pod, which a pod on faster cards then reports: a cluster shows that too.
 *
 * @param noiseSigma sigma of the lognormal factor on each report (0.1: most reports within ±20 %)
 * @param bogusShare share of reports that are not measurements: half from pods that crashed within a minute of
 *                   starting, half with their work inflated ten times
 */
public record WorkReporting(double noiseSigma, double bogusShare) {

    public static final WorkReporting DEFAULTS = new WorkReporting(0.1, 0.02);
    /** A crashed pod's run: under this many seconds, below any sensible minimum run time of a learner. */
    static final double CRASH_SECONDS = 60;
    static final double INFLATION = 10;

    public WorkReporting {
        if (!(noiseSigma >= 0 && noiseSigma <= 1)) {
            throw new IllegalArgumentException("noiseSigma: expected 0 to 1, got " + noiseSigma);
        }
        if (!(bogusShare >= 0 && bogusShare <= 1)) {
            throw new IllegalArgumentException("bogusShare: expected 0 to 1, got " + bogusShare);
        }
    }

    /**
     * @param run              the run that ended
     * @param stepsPerRefSecond the job's work unit: its steps per second on its reference card at its GPU count
     * @param random           the reports' own randomness (seeded with the trace)
     */
    public List<WorkSample> samples(EndedRun run, double stepsPerRefSecond, Random random) {
        var job = run.job();
        var samples = new ArrayList<WorkSample>(run.pods().size());
        var workloadClass = GavelThroughputs.workloadClass(job.type());
        var endedAt = KubeObjects.instant(run.endedAt());
        for (var pod : run.pods()) {
            double share = (double) pod.gpus() / job.gpus();
            double seconds = run.runSeconds();
            double work = run.referenceSeconds() * stepsPerRefSecond * share * Math.exp(noiseSigma * random.nextGaussian());
            if (random.nextDouble() < bogusShare) {
                if (random.nextBoolean()) {
                    // Crashed early: a short run that did a little work before it failed.
                    double crashed = CRASH_SECONDS * random.nextDouble();
                    work = seconds > 0 ? work * Math.min(1, crashed / seconds) : 0;
                    seconds = Math.min(seconds, crashed);
                } else {
                    work *= INFLATION;
                }
            }
            samples.add(new WorkSample(workloadClass, "sim", pod.cardModel(), pod.gpus(), seconds, work, endedAt));
        }
        return samples;
    }
}
