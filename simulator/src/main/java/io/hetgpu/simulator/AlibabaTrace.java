package io.hetgpu.simulator;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.CpuMemory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Alibaba GPU cluster trace v2023 (Weng et al., "Beware of Fragmentation", USENIX ATC 2023) on its own
 * 1,213 GPU nodes: pods with GPUs (gpuspec33 sample), LS as high priority, BE as low, Burstable and
 * Guaranteed neutral; gpu_spec as {@code hetgpu.io/gpu-models}. Stand-ins (README): a pod sharing a GPU
 * (gpu_milli below 1000) takes a whole one, since hetgpu allocates whole GPUs; the undisclosed G2 and G3
 * nodes are modelled as DGX A100 and DGX H100; A10 nodes as a T4 server with A10 cards; a node keeps the
 * first n GPUs of its profile. The trace's durations are taken as durations on a V100, and other cards run
 * them at the ESTIMATED factors of {@link #SPEED}.
 */
public final class AlibabaTrace {

    private static final String DATA = "/io/hetgpu/simulator/data/";

    /** Speed relative to a V100: estimates (the trace does not say what its jobs are), not measurements. */
    static final Map<String, Double> SPEED = Map.of("T4", 0.5, "P100", 0.6, "V100", 1.0, "A10", 0.8, "A100", 2.0, "H100", 3.0);

    /** Trace model -> card model it is simulated as. */
    static final Map<String, String> MODEL = Map.of("P100", "P100", "T4", "T4", "V100M16", "V100", "V100M32", "V100",
            "A10", "A10", "G2", "A100", "G3", "H100");

    private AlibabaTrace() {
    }

    public static Experiment experiment() {
        var inventory = inventory(read("openb_node_list_gpu_node.csv"));
        return new Experiment("alibaba-v2023", inventory, jobs(read("openb_pod_list_gpuspec33.csv")), CardSpeed.fixed(SPEED),
                WorkloadThroughputs.NONE);
    }

    static ClusterInventory inventory(List<String[]> rows) {
        var builder = new ClusterInventory.Builder(CardCatalog.defaults(), Math.max(1, rows.size() / 32));
        for (var row : rows) {
            var name = row[0];
            int gpus = Integer.parseInt(row[3]);
            var host = new CpuMemory(Long.parseLong(row[1]), Long.parseLong(row[2]) * 1024 * 1024);
            switch (row[4]) {
                case "P100" -> builder.add(name, "dgx1-p100", gpus, null, 0, host);
                case "T4" -> builder.add(name, "t4-4x", gpus, null, 0, host);
                case "V100M16" -> builder.add(name, "dgx1-v100", gpus, null, 0, host);
                case "V100M32" -> builder.add(name, "v100-pcie-8x", gpus, null, 0, host);
                case "A10" -> builder.add(name, "t4-4x", gpus, "NVIDIA A10", 23028, host);
                case "G2" -> builder.add(name, "dgx-a100", gpus, null, 0, host);
                case "G3" -> builder.add(name, "dgx-h100", gpus, null, 0, host);
                default -> throw new IllegalArgumentException("openb_node_list_gpu_node.csv: node " + name + ": unknown model \"" + row[4] + "\"");
            }
        }
        return builder.build();
    }

    static List<Job> jobs(List<String[]> rows) {
        var jobs = new ArrayList<Job>();
        for (var row : rows) {
            int gpus = Integer.parseInt(row[3]);
            if (gpus == 0) {
                continue;
            }
            double created = Double.parseDouble(row[8]);
            double started = row[10].isEmpty() ? created : Double.parseDouble(row[10]);
            double duration = Math.max(1, Double.parseDouble(row[9]) - started);
            var qos = row[6];
            boolean high = qos.equals("LS");
            int priority = high ? Job.HIGH_PRIORITY : qos.equals("BE") ? Job.LOW_PRIORITY : Job.HIGH_PRIORITY / 2;
            var models = new LinkedHashSet<String>();
            long minMemory = 0;
            if (!row[5].isEmpty()) {
                var named = new LinkedHashSet<>(List.of(row[5].split("\\|")));
                named.forEach(model -> models.add(MODEL.getOrDefault(model, model)));
                if (named.equals(Set.of("V100M32"))) {
                    minMemory = 30 * 1024;
                }
            }
            jobs.add(new Job(jobs.size(), created, high, priority, "", List.of(new Job.Pod(gpus, "")), duration, models, minMemory, 0, ""));
        }
        return jobs;
    }

    private static List<String[]> read(String file) {
        try (var in = AlibabaTrace.class.getResourceAsStream(DATA + file)) {
            var lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().skip(1).filter(line -> !line.isBlank()).toList();
            return lines.stream().map(line -> line.split(",", -1)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
