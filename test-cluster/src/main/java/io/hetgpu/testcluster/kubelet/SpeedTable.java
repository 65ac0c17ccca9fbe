package io.hetgpu.testcluster.kubelet;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.Quote;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;

/**
 * How fast each workload class really runs on each card model in a simulated cluster: the test's own truth, in the
 * class's unit of work per second on one GPU. It decides how long a pod's run takes ({@link #runTime}), which the
 * simulated kubelet writes when it ends the pod ({@link PodEnd}); the extender sees only those ends and must learn the
 * table from them, so it is never given to the extender.
 *
 * @param workPerGpuSecond workload class (lower case) -> card model ({@link CardModel#fromProductName}) -> figure above 0
 */
public record SpeedTable(Map<String, Map<String, Double>> workPerGpuSecond) {

    public SpeedTable {
        var copy = new TreeMap<String, Map<String, Double>>();
        workPerGpuSecond.forEach((workload, row) -> {
            var cards = new TreeMap<String, Double>();
            row.forEach((card, speed) -> {
                if (!(speed > 0) || Double.isInfinite(speed)) {
                    throw new IllegalArgumentException("speed of " + Quote.of(workload) + " on " + Quote.of(card)
                            + ": expected a figure above 0, got " + speed);
                }
                cards.put(CardModel.fromProductName(card), speed);
            });
            copy.put(WorkloadThroughputs.className(workload), Collections.unmodifiableMap(cards));
        });
        workPerGpuSecond = Collections.unmodifiableMap(copy);
    }

    /** A table of one class: its figure on each card model. */
    public static SpeedTable of(String workload, Map<String, Double> byCard) {
        return new SpeedTable(Map.of(workload, byCard));
    }

    /** The class's figure on the card model, or empty when the table does not say. */
    public OptionalDouble speed(String workload, String cardModel) {
        if (workload == null || cardModel == null || cardModel.isBlank()) {
            return OptionalDouble.empty();
        }
        var row = workPerGpuSecond.get(WorkloadThroughputs.className(workload));
        var speed = row == null ? null : row.get(CardModel.fromProductName(cardModel));
        return speed == null ? OptionalDouble.empty() : OptionalDouble.of(speed);
    }

    /** How long a run takes, or why the table cannot tell. */
    public sealed interface RunTime {
        /**
         * @param duration    the run, in whole seconds (as the API server writes times), at least one
         * @param cardModel   the card that set the pace: the slowest of the pod's
         * @param perGpuSecond the class's figure there
         */
        record Known(Duration duration, String cardModel, double perGpuSecond) implements RunTime {
        }

        record Unknown(String reason) implements RunTime {
        }
    }

    /**
     * How long {@code work} units of {@code workload} take on the GPUs of {@code cardModels} (one entry per GPU):
     * work / (speed × GPUs), the speed being the slowest card's, since synchronous training waits for it.
     */
    public RunTime runTime(String workload, List<String> cardModels, double work) {
        if (cardModels.isEmpty()) {
            return new RunTime.Unknown("GPUs: none, a run on no GPU has no speed in the table");
        }
        if (!(work > 0) || Double.isInfinite(work)) {
            return new RunTime.Unknown("work: expected a figure above 0, got " + work);
        }
        String slowest = null;
        double pace = Double.MAX_VALUE;
        for (var card : cardModels) {
            var speed = speed(workload, card);
            if (speed.isEmpty()) {
                return new RunTime.Unknown("workload " + Quote.of(workload) + " on " + Quote.of(card) + ": not in the speed table "
                        + workPerGpuSecond.keySet());
            }
            if (speed.getAsDouble() < pace) {
                pace = speed.getAsDouble();
                slowest = CardModel.fromProductName(card);
            }
        }
        long seconds = Math.max(1, Math.round(work / (pace * cardModels.size())));
        return new RunTime.Known(Duration.ofSeconds(seconds), slowest, pace);
    }

    @Override
    public String toString() {
        var text = new StringBuilder();
        workPerGpuSecond.forEach((workload, row) -> {
            text.append(text.isEmpty() ? "" : "; ").append(workload).append(':');
            row.forEach((card, speed) -> text.append(' ').append(card).append(' ').append(String.format(Locale.ROOT, "%.4g", speed)));
        });
        return text.toString();
    }
}
