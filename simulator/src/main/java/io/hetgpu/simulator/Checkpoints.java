package io.hetgpu.simulator;

/**
 * What an eviction costs a job, an assumption stated in the report: a job saves its work every {@code intervalSeconds}
 * of run time, so an evicted job resumes from its last checkpoint and loses what it did since; restarting takes
 * {@code restartOverheadSeconds} (pulling the image, loading the checkpoint, warming up) before it makes progress again.
 *
 * @param intervalSeconds        0: the job never checkpoints and restarts from scratch
 * @param restartOverheadSeconds added to every run after the first
 */
public record Checkpoints(double intervalSeconds, double restartOverheadSeconds) {

    /** 30 minutes between checkpoints, 5 minutes to restart. */
    public static final Checkpoints DEFAULTS = new Checkpoints(30 * 60, 5 * 60);

    public Checkpoints {
        if (!(intervalSeconds >= 0) || Double.isInfinite(intervalSeconds)) {
            throw new IllegalArgumentException("--checkpoint-interval: expected 0 or more minutes, got " + intervalSeconds / 60);
        }
        if (!(restartOverheadSeconds >= 0) || Double.isInfinite(restartOverheadSeconds)) {
            throw new IllegalArgumentException("--restart-overhead: expected 0 or more minutes, got " + restartOverheadSeconds / 60);
        }
    }

    /** Seconds of progress saved by a run that made {@code progressSeconds} of progress. */
    double saved(double progressSeconds) {
        return intervalSeconds == 0 ? 0 : Math.floor(progressSeconds / intervalSeconds) * intervalSeconds;
    }
}
