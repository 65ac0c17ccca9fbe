package io.hetgpu.testcluster.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The jobs of several pods that run only in part: some of their pods placed, others waiting. Such a job makes no
 * progress (every pod of a distributed training job must run), yet its placed pods hold their GPUs.
 *
 * @param jobs the half-placed jobs, by name
 * @param gpus the GPUs their placed pods hold
 */
public record HalfPlacedJobs(Set<String> jobs, int gpus) {

    public HalfPlacedJobs {
        jobs = java.util.Collections.unmodifiableSet(new TreeSet<>(jobs));
    }

    /**
     * Read from where every pod is: a job is a name that more than one pod carries ("-" is no job), so the placements
     * must name pods by their job of several pods (an application's independent pods sharing a name would count as one).
     */
    public static HalfPlacedJobs of(List<Placement> placements) {
        var byJob = new LinkedHashMap<String, List<Placement>>();
        placements.stream().filter(p -> !p.job().equals("-")).forEach(p -> byJob.computeIfAbsent(p.job(), job -> new ArrayList<>()).add(p));
        var half = new TreeSet<String>();
        int gpus = 0;
        for (var job : byJob.entrySet()) {
            long placed = job.getValue().stream().filter(Placement::isPlaced).count();
            if (placed > 0 && placed < job.getValue().size()) {
                half.add(job.getKey());
                gpus += job.getValue().stream().filter(Placement::isPlaced).mapToInt(p -> p.gpus().size()).sum();
            }
        }
        return new HalfPlacedJobs(half, gpus);
    }

    /** The demo's line: {@code half-placed jobs: N, GPUs held by them: M}. */
    public String line() {
        return "half-placed jobs: " + jobs.size() + ", GPUs held by them: " + gpus;
    }
}
