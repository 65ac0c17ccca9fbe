package io.hetgpu.extender.policy;

import io.hetgpu.gpu.CardModel;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * An admin's table of how fast each workload class runs on each card model (any unit, as long as one
 * class uses one unit: steps/s, images/s). A pod naming its class in {@code hetgpu.io/workload} is then
 * ranked by its own speed on the cards instead of by card tier, because a newer card is not always a
 * faster one (Gavel measured recommendation models running slower on V100 than on K80 or P100).
 *
 * @param table workload class (lower case) -> normalised card model -> throughput (> 0)
 */
public record WorkloadThroughputs(Map<String, Map<String, Double>> table) {

    /** No table: every pod is ranked by card tier. */
    public static final WorkloadThroughputs NONE = new WorkloadThroughputs(Map.of());

    public WorkloadThroughputs {
        var copy = new LinkedHashMap<String, Map<String, Double>>();
        for (var entry : table.entrySet()) {
            var byModel = new LinkedHashMap<String, Double>();
            for (var card : entry.getValue().entrySet()) {
                double value = card.getValue() == null ? Double.NaN : card.getValue();
                if (!(value > 0) || Double.isInfinite(value)) {
                    throw new IllegalArgumentException("workloads." + entry.getKey() + "." + card.getKey()
                            + ": expected a throughput above 0, got " + card.getValue());
                }
                byModel.put(CardModel.fromProductName(card.getKey()), value);
            }
            copy.put(className(entry.getKey()), Map.copyOf(byModel));
        }
        table = Map.copyOf(copy);
    }

    /** How a class name is compared: case and surrounding blanks do not matter. */
    public static String className(String workload) {
        return workload.strip().toLowerCase(Locale.ROOT);
    }

    public boolean isEmpty() {
        return table.isEmpty();
    }

    /** The class's throughput on a card model, or 0 when the table does not say. */
    public double of(String workload, String model) {
        var byModel = table.get(className(workload));
        if (byModel == null) {
            return 0;
        }
        return byModel.getOrDefault(model, 0.0);
    }

    public boolean knows(String workload) {
        return !workload.isBlank() && table.containsKey(className(workload));
    }
}
