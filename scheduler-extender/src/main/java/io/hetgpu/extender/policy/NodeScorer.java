package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.function.Function;

/**
 * One placement preference. Scores every candidate at once, because several preferences are relative
 * to the others ("the newest tier among the nodes that fit"). Each value is in 0..1, higher is better;
 * a scorer with nothing to say returns the same value for every node.
 */
public interface NodeScorer {

    /** Short name for configuration ({@code policy.weights.NAME}), score tables and explanations. */
    String name();

    /** How much it counts unless the configuration says otherwise (0..100; 0 turns it off). */
    int defaultWeight();

    double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context);

    /**
     * The same, with the columns the scorers before this one gave the same candidates in this call ({@code earlier}, by
     * scorer name; null for one not asked, as a scorer of weight 0 is not): a scorer built on another's values reads
     * them instead of working them out again.
     */
    default double[] score(PodRequest pod, List<Candidate> candidates, PlacementContext context, Function<String, double[]> earlier) {
        return score(pod, candidates, context);
    }

    /**
     * A hard order this preference imposes on the final 0..10 scores, whatever its weight (which only shapes
     * the weighted sum); none by default.
     */
    default ScoreOrder order(PodRequest pod, List<Candidate> candidates) {
        return ScoreOrder.NONE;
    }

    /** Turns a candidate's weighted score into its final one. */
    @FunctionalInterface
    interface ScoreOrder {
        ScoreOrder NONE = (candidate, score) -> score;

        int apply(Candidate candidate, int score);
    }
}
