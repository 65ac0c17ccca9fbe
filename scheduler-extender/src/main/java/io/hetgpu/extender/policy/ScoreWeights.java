package io.hetgpu.extender.policy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How much each scorer counts, by the scorer's name; zero turns one off.
 *
 * @param byName every registered scorer's weight, in registration order
 */
public record ScoreWeights(Map<String, Integer> byName) {

    public static final ScoreWeights DEFAULTS = new ScoreWeights(Scorers.defaultWeights());

    public ScoreWeights {
        var registered = Scorers.defaultWeights().keySet();
        if (!byName.keySet().equals(registered)) {
            throw new IllegalArgumentException("weights must name exactly the scorers " + String.join(", ", registered) + ", got " + byName.keySet());
        }
        var ordered = new LinkedHashMap<String, Integer>();
        for (var name : registered) {
            var weight = byName.get(name);
            var problem = problem(name, weight);
            if (problem.isPresent()) {
                throw new IllegalArgumentException(name + ": " + problem.get() + ", got " + weight);
            }
            ordered.put(name, weight);
        }
        if (ordered.values().stream().allMatch(weight -> weight == 0)) {
            throw new IllegalArgumentException("at least one weight must be above 0");
        }
        byName = Collections.unmodifiableMap(ordered);
    }

    /** The registered scorers' names, in registration order. */
    public static List<String> names() {
        return List.copyOf(DEFAULTS.byName.keySet());
    }

    /**
     * The defaults with the weights {@code given} by name; every unknown name and every weight out of range is
     * reported in the one exception.
     */
    public static ScoreWeights named(Map<String, Integer> given) {
        var weights = new LinkedHashMap<>(DEFAULTS.byName);
        var problems = new ArrayList<String>();
        given.forEach((name, weight) -> problem(name, weight).ifPresentOrElse(
                problem -> problems.add(name + ": " + problem + ", got " + weight),
                () -> weights.put(name, weight)));
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        return new ScoreWeights(weights);
    }

    /**
     * What is wrong with one weight given by name (an unknown scorer, listing the known ones, or a weight out of
     * 0..100), if anything: the one check behind {@link #named} and the configuration file's per-field errors.
     */
    public static Optional<String> problem(String name, Integer weight) {
        if (!Scorers.defaultWeights().containsKey(name)) {
            return Optional.of("no scorer of that name (scorers: " + String.join(", ", names().stream().sorted().toList()) + ")");
        }
        return weight == null || weight < 0 || weight > 100 ? Optional.of("expected 0..100") : Optional.empty();
    }

    public int of(String scorer) {
        var weight = byName.get(scorer);
        if (weight == null) {
            throw new IllegalArgumentException("no scorer named " + scorer + " (scorers: " + String.join(", ", names()) + ")");
        }
        return weight;
    }

    public ScoreWeights with(String scorer, int weight) {
        of(scorer);
        var changed = new LinkedHashMap<>(byName);
        changed.put(scorer, weight);
        return new ScoreWeights(changed);
    }
}
