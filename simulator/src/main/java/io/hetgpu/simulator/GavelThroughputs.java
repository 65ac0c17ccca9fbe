package io.hetgpu.simulator;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Gavel's measured single-job throughputs (steps/s) per job type, GPU count and card (Narayanan et al.,
 * OSDI 2020; the copy in {@code data/gavel-throughputs.csv} cites it).
 *
 * @param rows job type -> GPU count -> card model -> steps/s
 */
public record GavelThroughputs(Map<String, Map<Integer, Map<String, Double>>> rows) {

    public static final List<String> CARDS = List.of("K80", "P100", "V100");
    private static final String RESOURCE = "/io/hetgpu/simulator/data/gavel-throughputs.csv";

    public static GavelThroughputs shipped() {
        try (InputStream in = GavelThroughputs.class.getResourceAsStream(RESOURCE)) {
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
    }

    /** CSV with the header {@code job,gpus,k80_steps_per_s,p100_steps_per_s,v100_steps_per_s}; job names quoted. */
    static GavelThroughputs parse(String csv) {
        var rows = new LinkedHashMap<String, Map<Integer, Map<String, Double>>>();
        var lines = csv.lines().toList();
        for (int i = 1; i < lines.size(); i++) {
            var line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            int close = line.lastIndexOf('"');
            var name = line.substring(1, close);
            var fields = line.substring(close + 2).split(",");
            var byCard = new LinkedHashMap<String, Double>();
            for (int c = 0; c < CARDS.size(); c++) {
                byCard.put(CARDS.get(c), Double.parseDouble(fields[c + 1]));
            }
            rows.computeIfAbsent(name, k -> new LinkedHashMap<>()).put(Integer.parseInt(fields[0]), byCard);
        }
        return new GavelThroughputs(rows);
    }

    /** Whether Gavel measured the job type on {@code gpus} GPUs (a distributed type, for more than one). */
    public boolean measuredAt(String jobType, int gpus) {
        var byCount = rows.get(jobType);
        return byCount != null && byCount.containsKey(gpus);
    }

    public List<String> jobTypes() {
        return new ArrayList<>(rows.keySet());
    }

    /**
     * Steps/s of a job type on {@code gpus} cards of a model: the row measured at that count, else (no row, or
     * a card Gavel could not run it on at that count, recorded as 0) the 1-GPU row, so that speed ratios
     * between cards are always defined.
     */
    public double stepsPerSecond(String jobType, int gpus, String model) {
        var byCount = rows.get(jobType);
        if (byCount == null) {
            throw new IllegalArgumentException("no Gavel throughputs for job type \"" + jobType + "\"");
        }
        var row = byCount.get(gpus);
        if (row == null || row.values().stream().anyMatch(value -> !(value > 0))) {
            row = byCount.get(1);
        }
        return row.getOrDefault(model, 0.0);
    }

    /** "ResNet-18 (batch size 128)" -> "resnet-18-bs128": a value for the {@code hetgpu.io/workload} annotation. */
    public static String workloadClass(String jobType) {
        return jobType.toLowerCase(Locale.ROOT).replace("batch size ", "bs").replaceAll("[^a-z0-9]+", "-").replaceAll("(^-|-$)", "");
    }

    /** The table an admin would put in the extender config: each class's single-GPU steps/s per card. */
    public WorkloadThroughputs asWorkloadTable() {
        var table = new LinkedHashMap<String, Map<String, Double>>();
        rows.forEach((type, byCount) -> table.put(workloadClass(type), byCount.get(1)));
        return new WorkloadThroughputs(table);
    }
}
