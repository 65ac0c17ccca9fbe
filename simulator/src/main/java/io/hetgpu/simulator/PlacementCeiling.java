package io.hetgpu.simulator;

import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What no scheduler can beat on a trace: every job starting the moment it arrives, on the node whose
 * cards and GPU layout run it fastest. Nothing waits and nothing shares, so the figures bound
 * preemptive schedulers as well as non-preemptive ones; they tell how much of a target placement
 * could reach at all.
 *
 * <p>Optimistic on purpose where the communication model would need the rest of the cluster: a
 * ps/worker job that no single node holds is assumed to get nodes of one rack.
 *
 * @param meanJctHigh  mean completion time of high-priority jobs, hours
 * @param meanJctRest  the same for every other job
 * @param meanJct      over all jobs
 * @param offeredLoad  GPU-hours the trace needs when every job runs at its fastest, over the GPU-hours the
 *                     cluster has between the first and the last arrival; above 1 no scheduler keeps up,
 *                     and mean completion times grow with the length of the trace
 * @param unplaceable  jobs no node could run (left out of the means)
 * @param highByGpus   mean completion time of high-priority jobs by GPUs per job
 */
public record PlacementCeiling(double meanJctHigh, double meanJctRest, double meanJct, double offeredLoad, int unplaceable,
                               SortedMap<Integer, Double> highByGpus) {

    public PlacementCeiling {
        highByGpus = Collections.unmodifiableSortedMap(new TreeMap<>(highByGpus));
    }

    /** Without the breakdown by size. */
    public PlacementCeiling(double meanJctHigh, double meanJctRest, double meanJct, double offeredLoad, int unplaceable) {
        this(meanJctHigh, meanJctRest, meanJct, offeredLoad, unplaceable, new TreeMap<>());
    }

    public static PlacementCeiling of(List<Job> jobs, ClusterInventory inventory, CardSpeed speed) {
        return of(jobs, inventory, speed, CommunicationModel.DEFAULTS);
    }

    public static PlacementCeiling of(List<Job> jobs, ClusterInventory inventory, CardSpeed speed, CommunicationModel communication) {
        double high = 0;
        double rest = 0;
        int highJobs = 0;
        int restJobs = 0;
        int unplaceable = 0;
        double gpuHours = 0;
        var highHoursByGpus = new TreeMap<Integer, double[]>();
        double first = Double.MAX_VALUE;
        double last = -Double.MAX_VALUE;
        for (var job : jobs) {
            first = Math.min(first, job.arrival());
            last = Math.max(last, job.arrival());
            double fastest = fastestRate(job, inventory, speed, communication);
            if (fastest == 0) {
                unplaceable++;
                continue;
            }
            double hours = job.work() / fastest / 3600;
            gpuHours += hours * job.gpus();
            if (job.high()) {
                high += hours;
                highJobs++;
                var bySize = highHoursByGpus.computeIfAbsent(job.gpus(), gpus -> new double[2]);
                bySize[0] += hours;
                bySize[1]++;
            } else {
                rest += hours;
                restJobs++;
            }
        }
        double capacity = inventory.gpuCount() * Math.max(0, last - first) / 3600;
        return new PlacementCeiling(highJobs == 0 ? 0 : high / highJobs, restJobs == 0 ? 0 : rest / restJobs,
                highJobs + restJobs == 0 ? 0 : (high + rest) / (highJobs + restJobs),
                capacity == 0 ? 0 : gpuHours / capacity, unplaceable, meanBySize(highHoursByGpus));
    }

    private static SortedMap<Integer, Double> meanBySize(SortedMap<Integer, double[]> sums) {
        var means = new TreeMap<Integer, Double>();
        sums.forEach((gpus, sum) -> means.put(gpus, sum[0] / sum[1]));
        return means;
    }

    /** The job's best speed on any node (card speed times communication factor), 0 when no node can run it. */
    static double fastestRate(Job job, ClusterInventory inventory, CardSpeed speed, CommunicationModel communication) {
        if (job.gpus() == 0) {
            return 1.0;
        }
        int widestPod = job.pods().stream().mapToInt(Job.Pod::gpus).max().orElse(0);
        double best = 0;
        for (var node : inventory.nodes()) {
            var topology = node.gpus().topology();
            long eligible = KubernetesDefaultPlacer.acceptedCards(job, node);
            boolean wholeJob = Long.bitCount(eligible) >= job.gpus();
            int size = wholeJob ? job.gpus() : widestPod;
            if (Long.bitCount(eligible) < size) {
                continue;
            }
            var allocator = node.gpus().allocator();
            var set = allocator.choose(eligible, 0, size, true).or(() -> allocator.choose(eligible, 0, size, false));
            if (set.isEmpty()) {
                continue;
            }
            double slowest = Double.MAX_VALUE;
            for (int position : set.get().positions()) {
                slowest = Math.min(slowest, speed.relative(job, topology.device(position).model()));
            }
            best = Math.max(best, slowest * factor(job, wholeJob, set.get().nvlinkConnected(), communication));
        }
        return best;
    }

    /** {@link CommunicationModel}'s factor for the best layout this node allows. */
    private static double factor(Job job, boolean wholeJob, boolean nvlinkSet, CommunicationModel communication) {
        if (job.gpus() < 2) {
            return 1.0;
        }
        if (!wholeJob) {
            return communication.sameRack();
        }
        boolean onePod = job.pods().stream().filter(pod -> pod.gpus() > 0).count() == 1;
        return onePod && nvlinkSet ? CommunicationModel.NVLINK_SET : communication.pcieSet();
    }
}
