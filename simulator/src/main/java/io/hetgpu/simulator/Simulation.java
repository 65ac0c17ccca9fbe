package io.hetgpu.simulator;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.TreeSet;

/**
 * A discrete-event simulation of one trace under one scheduler: arrivals and completions are the
 * events; after each, pending jobs are tried in kube-scheduler's queue order (priority, then arrival),
 * one pod at a time. Nothing is preempted. A job that does not fit waits and is tried again when GPUs
 * are freed, while jobs behind it may go first (kube-scheduler has no head-of-line blocking). The pods
 * of a ps/worker job are placed together or not at all, as a gang scheduler (Kueue, Volcano) admits
 * them; without that, half-placed jobs would hold GPUs they cannot use.
 */
public final class Simulation {

    /** kube-scheduler's PrioritySort: higher priority first, then earlier arrival. */
    static final Comparator<Job> QUEUE_ORDER = Comparator.comparingInt(Job::priority).reversed()
            .thenComparingDouble(Job::arrival).thenComparingInt(Job::id);

    private final ClusterInventory inventory;
    private final CardSpeed speed;
    private final int topTier;

    public Simulation(ClusterInventory inventory, CardSpeed speed) {
        this.inventory = inventory;
        this.speed = speed;
        this.topTier = inventory.nodes().stream().flatMap(node -> node.gpus().tiers().stream())
                .mapToInt(tier -> tier.rank()).max().orElse(0);
    }

    /**
     * @param jobs jobs never placed (too big for any node, or cards the cluster lacks) are left out of the
     *             result and counted in {@link Result#neverPlaced()}
     */
    public record Result(String policy, List<JobRun> runs, int neverPlaced) {
        public Result {
            runs = List.copyOf(runs);
        }
    }


    public Result run(List<Job> jobs, Placer placer) {
        var cluster = new ClusterState(inventory);
        var arrivals = jobs.stream().sorted(Comparator.comparingDouble(Job::arrival).thenComparingInt(Job::id)).toList();
        var running = new PriorityQueue<JobRun>(Comparator.comparingDouble(JobRun::end).thenComparingInt(r -> r.job().id()));
        var pending = new TreeSet<Job>(QUEUE_ORDER);
        var runs = new ArrayList<JobRun>(jobs.size());
        var arrived = new ArrayList<Job>();
        int next = 0;
        while (next < arrivals.size() || !running.isEmpty()) {
            double now = Math.min(next < arrivals.size() ? arrivals.get(next).arrival() : Double.MAX_VALUE,
                    running.isEmpty() ? Double.MAX_VALUE : running.peek().end());
            boolean freed = false;
            while (!running.isEmpty() && running.peek().end() <= now) {
                var done = running.poll();
                done.placements().forEach(p -> cluster.give(p.node(), p.mask()));
                runs.add(done);
                freed = true;
            }
            arrived.clear();
            while (next < arrivals.size() && arrivals.get(next).arrival() <= now) {
                pending.add(arrivals.get(next));
                arrived.add(arrivals.get(next++));
            }
            // Jobs that failed before fail again until GPUs are freed: only newcomers need a try then.
            var candidates = freed ? new ArrayList<>(pending) : arrived.stream().sorted(QUEUE_ORDER).toList();
            for (var job : candidates) {
                if (job.gpus() > cluster.freeGpus()) {
                    continue;
                }
                var placements = placeAll(job, placer, cluster);
                if (placements != null) {
                    pending.remove(job);
                    running.add(start(job, now, placements));
                }
            }
        }
        return new Result(placer.name(), runs, pending.size());
    }

    /** Places every pod of the job, or none: a pod that fits nowhere gives back what the earlier ones took. */
    private static List<Placer.PodPlacement> placeAll(Job job, Placer placer, ClusterState cluster) {
        var placed = new ArrayList<Placer.PodPlacement>(job.pods().size());
        for (int i = 0; i < job.pods().size(); i++) {
            var placement = placer.place(job, i, placed, cluster);
            if (placement == null) {
                placed.forEach(p -> cluster.give(p.node(), p.mask()));
                return null;
            }
            cluster.take(placement.node(), placement.mask());
            placed.add(placement);
        }
        return placed;
    }

    private JobRun start(Job job, double now, List<Placer.PodPlacement> placements) {
        var models = new ArrayList<String>(job.gpus());
        int top = 0;
        double slowest = Double.MAX_VALUE;
        for (var placement : placements) {
            var gpus = inventory.nodes().get(placement.node()).gpus();
            for (int position : placement.set().positions()) {
                var model = gpus.topology().device(position).model();
                models.add(model);
                slowest = Math.min(slowest, speed.relative(job, model));
                top += gpus.tiers().get(position).rank() == topTier ? 1 : 0;
            }
        }
        if (slowest == Double.MAX_VALUE) {
            slowest = 1.0;
        }
        double duration = job.work() / (slowest * CommunicationModel.factor(job, placements, inventory));
        if (!(duration >= 0) || Double.isInfinite(duration)) {
            throw new IllegalStateException("job " + job.id() + " (" + job.type() + ") gets no finite duration on " + models);
        }
        return new JobRun(job, now, now + duration, placements, models, top, CommunicationModel.onNvlink(job, placements),
                crossRackGb(job, placements, duration));
    }

    /** A ps/worker job's traffic between each worker and the ps, counted where they sit in different racks. */
    private double crossRackGb(Job job, List<Placer.PodPlacement> placements, double duration) {
        if (!job.distributed()) {
            return 0;
        }
        var psRack = "";
        for (int i = 0; i < placements.size(); i++) {
            if (job.pods().get(i).role().equals("ps")) {
                psRack = inventory.nodes().get(placements.get(i).node()).rack();
            }
        }
        double gb = 0;
        for (int i = 0; i < placements.size(); i++) {
            if (job.pods().get(i).role().equals("worker")
                    && !inventory.nodes().get(placements.get(i).node()).rack().equals(psRack)) {
                gb += job.trafficGbPerHour() * duration / 3600;
            }
        }
        return gb;
    }
}
