package io.hetgpu.extender.policy;

/** How much each scorer counts; zero turns one off. */
public record ScoreWeights(int tier, int nvlink, int job, int data, int cpu) {

    public static final ScoreWeights DEFAULTS = new ScoreWeights(4, 3, 3, 2, 5);

    public ScoreWeights {
        for (int weight : new int[] {tier, nvlink, job, data, cpu}) {
            if (weight < 0 || weight > 100) {
                throw new IllegalArgumentException("every weight must be in 0..100, got " + weight);
            }
        }
        if (tier + nvlink + job + data + cpu == 0) {
            throw new IllegalArgumentException("at least one weight must be above 0");
        }
    }
}
