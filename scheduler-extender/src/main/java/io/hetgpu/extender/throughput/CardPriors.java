package io.hetgpu.extender.throughput;

import io.hetgpu.gpu.CardModel;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * How fast each card model trains relative to a V100 (= 1), before a class has been measured on it: the prior that
 * fills a class's row for cards it has not run on ({@link LearnedTable}). The models are those of gpu-model's
 * {@code CardCatalog.defaults()} and the order is its tier order (a test holds both), so the prior never contradicts
 * the ranking a pod without a class gets. The figures are rounded from public dense-training benchmarks (ResNet-50 and
 * BERT, mixed precision where the card has tensor cores, NVIDIA's and MLPerf's published numbers): what matters is
 * the ratio between two cards, and a learned figure replaces a prior as soon as the class has run on the card.
 */
public final class CardPriors {

    private static final Map<String, Double> RELATIVE_SPEED = Map.ofEntries(
            Map.entry("K80", 0.15),
            Map.entry("M60", 0.2),
            Map.entry("M40", 0.22),
            Map.entry("P4", 0.25),
            Map.entry("P40", 0.4),
            Map.entry("P100", 0.5),
            Map.entry("T4", 0.55),
            Map.entry("V100", 1.0),
            Map.entry("V100S", 1.1),
            Map.entry("A10", 1.15),
            Map.entry("L4", 1.2),
            Map.entry("A30", 1.5),
            Map.entry("A40", 1.6),
            Map.entry("L40", 1.8),
            Map.entry("L40S", 2.0),
            Map.entry("A100", 2.5),
            Map.entry("H800", 4.2),
            Map.entry("H100", 4.5),
            Map.entry("H200", 5.0),
            Map.entry("GH200", 5.2),
            Map.entry("B200", 8.0));

    private CardPriors() {
    }

    /** The model's speed relative to a V100, or empty for a model the table does not know (it gets no prior). */
    public static OptionalDouble relativeSpeed(String model) {
        if (model == null || model.isBlank()) {
            return OptionalDouble.empty();
        }
        var speed = RELATIVE_SPEED.get(CardModel.fromProductName(model));
        return speed == null ? OptionalDouble.empty() : OptionalDouble.of(speed);
    }

    /** Every model with a prior. */
    public static java.util.Set<String> models() {
        return RELATIVE_SPEED.keySet();
    }

    /**
     * A class's figure on {@code target} from its figures on other cards ({@code known}: card -> figure): the
     * geometric mean, over known cards with a prior, of figure × prior(target) / prior(card); NaN when none has one
     * or the target has no prior.
     */
    public static double extrapolate(Map<String, Double> known, String target) {
        var targetSpeed = relativeSpeed(target);
        if (targetSpeed.isEmpty()) {
            return Double.NaN;
        }
        double logSum = 0;
        int count = 0;
        for (var entry : known.entrySet()) {
            var speed = relativeSpeed(entry.getKey());
            if (speed.isPresent() && entry.getValue() > 0) {
                logSum += Math.log(entry.getValue() * targetSpeed.getAsDouble() / speed.getAsDouble());
                count++;
            }
        }
        return count == 0 ? Double.NaN : Math.exp(logSum / count);
    }
}
