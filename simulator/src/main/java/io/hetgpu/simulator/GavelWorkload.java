package io.hetgpu.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Gavel's synthetic trace generator (Narayanan et al., OSDI 2020, section 7): Poisson arrivals; a job
 * runs 10^U(1.5,3) minutes with probability 0.8, else 10^U(3,4) minutes (on the reference card); it needs 1, 2, 4
 * or 8 GPUs with probability 70, 10, 15 and 5 %; its type is uniform over the throughput table (over the types Gavel
 * measured on several GPUs for a multi-GPU job, as its generator redraws until it has one); 20 %
 * of jobs are high priority, the rest low priority (a PriorityClass below 0; or, on request, none at all,
 * which the extender treats as neutral). 8-GPU jobs run as ps/worker jobs (a parameter server without GPUs and two
 * 4-GPU workers, 20..200 GB of gradients per worker-hour) whose data lives in a random rack.
 */
public final class GavelWorkload {

    private GavelWorkload() {
    }

    /**
     * @param ratePerHour mean arrivals per hour
     * @param count       jobs to generate
     * @param seed        the same seed gives the same trace
     * @param racks       the cluster's racks, for data placement
     */
    public static List<Job> generate(double ratePerHour, int count, long seed, GavelThroughputs throughputs, List<String> racks) {
        return generate(ratePerHour, count, seed, throughputs, racks, Job.LOW_PRIORITY);
    }

    /** @param otherPriority the spec.priority of the 80 % of jobs that are not high priority */
    public static List<Job> generate(double ratePerHour, int count, long seed, GavelThroughputs throughputs, List<String> racks,
                                     int otherPriority) {
        if (!(ratePerHour > 0)) {
            throw new IllegalArgumentException("--rate: expected jobs per hour above 0, got " + ratePerHour);
        }
        var random = new Random(seed);
        var types = throughputs.jobTypes();
        // Gavel's generator draws again until a multi-GPU job has a type it measured at that scale: uniform over those.
        var distributed = types.stream().filter(type -> throughputs.measuredAt(type, 2)).toList();
        var jobs = new ArrayList<Job>(count);
        double clock = 0;
        for (int id = 0; id < count; id++) {
            clock += -Math.log(1 - random.nextDouble()) / ratePerHour * 3600;
            double minutes = random.nextDouble() < 0.8 ? Math.pow(10, 1.5 + 1.5 * random.nextDouble()) : Math.pow(10, 3 + random.nextDouble());
            double p = random.nextDouble();
            int gpus = p < 0.70 ? 1 : p < 0.80 ? 2 : p < 0.95 ? 4 : 8;
            var choices = gpus == 1 ? types : distributed;
            var type = choices.get(random.nextInt(choices.size()));
            boolean high = random.nextDouble() < 0.2;
            double traffic = 0;
            var dataRack = "";
            List<Job.Pod> pods;
            if (gpus == 8) {
                pods = List.of(new Job.Pod(0, "ps"), new Job.Pod(4, "worker"), new Job.Pod(4, "worker"));
                traffic = 20 + 180 * random.nextDouble();
                dataRack = racks.get(random.nextInt(racks.size()));
            } else {
                pods = List.of(new Job.Pod(gpus, ""));
            }
            jobs.add(new Job(id, clock, high, high ? Job.HIGH_PRIORITY : otherPriority, type, pods, minutes * 60,
                    Set.of(), 0, traffic, dataRack));
        }
        return jobs;
    }
}
