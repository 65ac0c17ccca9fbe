package io.hetgpu.simulator;

import io.hetgpu.extender.service.PreemptionChoice;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.filter.NodeFit;
import io.hetgpu.kubescheduler.preemption.DefaultPreemption;
import io.hetgpu.kubescheduler.preemption.RunningPod;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;

/**
 * A discrete-event simulation of one trace under one scheduler: arrivals and completions are the events; after each,
 * pending jobs are tried in kube-scheduler's queue order (priority, then arrival), one pod at a time. A job that does not
 * fit waits and is tried again when GPUs are freed, while jobs behind it may go first (kube-scheduler has no
 * head-of-line blocking).
 *
 * <p>The pods of a ps/worker job are admitted together or not at all, for every scheduler alike, as Kueue admits a
 * workload (or the coscheduling plugin a pod group): without that, half-placed jobs would hold GPUs they cannot use.
 *
 * <p>A scheduler that preempts runs kube-scheduler's DefaultPreemption for a pod no node takes, through the
 * kube-scheduler model's own step, with the extender's preempt verb when it has one: the victims' jobs are evicted
 * (a ps/worker job that loses any pod restarts whole, as its training cannot go on without it) and resume later from
 * their last checkpoint ({@link Checkpoints}); the preemptor goes to its nominated node. For a gang, the evictions of
 * all its pods stand only if every pod then finds a place, as Kueue preempts for a whole workload; otherwise nothing
 * is evicted.
 */
public final class Simulation {

    /** kube-scheduler's PrioritySort: higher priority first, then earlier arrival. */
    static final Comparator<Job> QUEUE_ORDER = Comparator.comparingInt(Job::priority).reversed()
            .thenComparingDouble(Job::arrival).thenComparingInt(Job::id);

    private final ClusterInventory inventory;
    private final CardSpeed speed;
    private final Checkpoints checkpoints;
    private final CommunicationModel communication;
    private final int topTier;
    private final List<SchedulingNode> kubeNodes;

    public Simulation(ClusterInventory inventory, CardSpeed speed) {
        this(inventory, speed, Checkpoints.DEFAULTS);
    }

    public Simulation(ClusterInventory inventory, CardSpeed speed, Checkpoints checkpoints) {
        this(inventory, speed, checkpoints, CommunicationModel.DEFAULTS);
    }

    public Simulation(ClusterInventory inventory, CardSpeed speed, Checkpoints checkpoints, CommunicationModel communication) {
        this.inventory = inventory;
        this.speed = speed;
        this.checkpoints = checkpoints;
        this.communication = communication;
        this.topTier = inventory.nodes().stream().flatMap(node -> node.gpus().tiers().stream())
                .mapToInt(tier -> tier.rank()).max().orElse(0);
        this.kubeNodes = inventory.nodes().stream().map(KubeObjects::node).toList();
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
        return new Run(placer).play(jobs);
    }

    /**
     * A job's run in progress.
     *
     * @param run      what it will have been when it ends uneventfully
     * @param overhead seconds of restart overhead at its start, before it makes progress
     * @param rate     reference-card seconds of work it does per second
     */
    private record Running(JobRun run, double overhead, double rate) {
        Job job() {
            return run.job();
        }
    }

    /** What a job has done in the runs it lost to evictions. */
    private static final class Progress {
        double remaining;
        int evictions;
        double lostGpuSeconds;
        double usedGpuSeconds;

        Progress(double work) {
            this.remaining = work;
        }
    }

    /** One trace under one scheduler: the only mutable state of a simulation. */
    private final class Run {

        private final Placer placer;
        private final Preempting preempting;
        private final ClusterState cluster = new ClusterState(inventory);
        private final PriorityQueue<Running> running = new PriorityQueue<>(
                Comparator.comparingDouble((Running r) -> r.run().end()).thenComparingInt(r -> r.job().id()));
        private final TreeSet<Job> pending = new TreeSet<>(QUEUE_ORDER);
        private final Map<Integer, Progress> progress = new HashMap<>();
        private final List<Job> evicted = new ArrayList<>();

        Run(Placer placer) {
            this.placer = placer;
            this.preempting = placer.preempting();
        }

        Result play(List<Job> jobs) {
            var arrivals = jobs.stream().sorted(Comparator.comparingDouble(Job::arrival).thenComparingInt(Job::id)).toList();
            var runs = new ArrayList<JobRun>(jobs.size());
            var arrived = new ArrayList<Job>();
            boolean started = false;
            int next = 0;
            while (next < arrivals.size() || !running.isEmpty()) {
                double now = Math.min(next < arrivals.size() ? arrivals.get(next).arrival() : Double.MAX_VALUE,
                        running.isEmpty() ? Double.MAX_VALUE : running.peek().run().end());
                boolean freed = false;
                while (!running.isEmpty() && running.peek().run().end() <= now) {
                    var done = running.poll();
                    done.run().placements().forEach(p -> cluster.give(p.node(), p.mask(), done.job().priority()));
                    runs.add(done.run());
                    freed = true;
                }
                arrived.clear();
                while (next < arrivals.size() && arrivals.get(next).arrival() <= now) {
                    pending.add(arrivals.get(next));
                    arrived.add(arrivals.get(next++));
                }
                // Jobs that failed before fail again until GPUs are freed: only newcomers need a try then. Under
                // preemption, a job started since is a new possible victim for the pending jobs that outrank it.
                List<Job> candidates;
                if (freed) {
                    candidates = new ArrayList<>(pending);
                } else if (started && preempting instanceof Preempting.Kube) {
                    int lowest = lowestRunningPriority();
                    var newcomers = new HashSet<>(arrived);
                    candidates = pending.stream().filter(job -> newcomers.contains(job) || job.priority() > lowest).toList();
                } else {
                    candidates = arrived.stream().sorted(QUEUE_ORDER).toList();
                }
                started = false;
                while (!candidates.isEmpty()) {
                    for (var job : candidates) {
                        if (pending.contains(job) && tryStart(job, now)) {
                            started = true;
                        }
                    }
                    // Jobs evicted in this round may fit elsewhere at once: the GPUs a preemptor did not need.
                    candidates = evicted.stream().sorted(QUEUE_ORDER).toList();
                    evicted.clear();
                }
            }
            return new Result(placer.name(), runs, pending.size());
        }

        private int lowestRunningPriority() {
            return running.stream().mapToInt(r -> r.job().priority()).min().orElse(Integer.MAX_VALUE);
        }

        /** Places every pod of the job, preempting when the scheduler does; or none, evicting nothing. */
        private boolean tryStart(Job job, double now) {
            if (job.gpus() > cluster.freeGpus() && !(preempting instanceof Preempting.Kube && job.priority() > lowestRunningPriority())) {
                return false;
            }
            var placed = new ArrayList<Placer.PodPlacement>(job.pods().size());
            var victims = new LinkedHashMap<Integer, Running>();
            for (int i = 0; i < job.pods().size(); i++) {
                var placement = placer.place(job, i, placed, cluster);
                if (placement == null && preempting instanceof Preempting.Kube kube && job.priority() > lowestRunningPriority()) {
                    placement = preempt(kube, job, i, placed, victims, now);
                }
                if (placement == null) {
                    placed.forEach(p -> cluster.give(p.node(), p.mask(), job.priority()));
                    victims.values().forEach(this::restore);
                    return false;
                }
                cluster.take(placement.node(), placement.mask(), job.priority());
                placed.add(placement);
            }
            victims.values().forEach(victim -> evict(victim, now));
            pending.remove(job);
            running.add(start(job, now, placed));
            return true;
        }

        /**
         * kube-scheduler's DefaultPreemption for one pod: the model's step picks a node and victims; their jobs stop (for
         * now: {@code victims} collects them) and the pod goes to the nominated node, or wherever the scheduler then
         * places it. Null when nothing can be evicted for it.
         */
        private Placer.PodPlacement preempt(Preempting.Kube kube, Job job, int podIndex, List<Placer.PodPlacement> earlier,
                                            Map<Integer, Running> victims, double now) {
            var pod = job.pods().get(podIndex);
            var podsByNode = new HashMap<String, List<RunningPod>>();
            var facts = new HashMap<String, PreemptVerb.VictimFacts>();
            var jobsByUid = new HashMap<String, Running>();
            for (var run : running) {
                var placements = run.run().placements();
                for (int i = 0; i < placements.size(); i++) {
                    var node = inventory.nodes().get(placements.get(i).node()).name();
                    var uid = KubeObjects.uid(run.job(), i);
                    podsByNode.computeIfAbsent(node, k -> new ArrayList<>()).add(KubeObjects.running(run.job(), i, run.run().start()));
                    int gpus = run.job().pods().get(i).gpus();
                    facts.put(uid, new PreemptVerb.VictimFacts(placements.get(i).mask(), PreemptionChoice.gpuSecondsLost(gpus,
                            KubeObjects.instant(lastSaved(run, now)), KubeObjects.instant(now))));
                    jobsByUid.put(uid, run);
                }
            }
            // The gang's pods placed so far are on their nodes too, at the preemptor's own priority: never victims.
            for (int i = 0; i < earlier.size(); i++) {
                var node = inventory.nodes().get(earlier.get(i).node()).name();
                podsByNode.computeIfAbsent(node, k -> new ArrayList<>()).add(KubeObjects.running(job, i, now));
            }
            var preemptor = KubeObjects.preemptor(job, podIndex);
            var request = preemptor.pod().request();
            List<DefaultPreemption.Extender> extenders = kube.verb() == PreemptVerb.NONE ? List.of()
                    : List.of(candidates -> kube.verb().keep(job, podIndex, earlier, candidates, cluster, facts));
            var outcome = kube.model().preempt(preemptor, kubeNodes, podsByNode, unresolvable(job, pod), List.of(),
                    (node, left) -> NodeFit.insufficientResource(request, node, left.stream().map(RunningPod::request).toList()).isEmpty(),
                    extenders);
            if (!(outcome instanceof DefaultPreemption.Outcome.Nominate nominate)) {
                return null;
            }
            for (var victim : nominate.victims().pods()) {
                var run = jobsByUid.get(victim.uid());
                if (victims.putIfAbsent(run.job().id(), run) == null) {
                    // The whole job stops: a ps/worker job cannot train on without one of its pods.
                    running.remove(run);
                    run.run().placements().forEach(p -> cluster.give(p.node(), p.mask(), run.job().priority()));
                }
            }
            var onNominated = placer.placeOn(job, podIndex, earlier, cluster, cluster.indexOf(nominate.node()));
            return onNominated != null ? onNominated : placer.place(job, podIndex, earlier, cluster);
        }

        /** Nodes no eviction makes fit: too few GPUs of the models the job accepts (node affinity in kube-scheduler's terms). */
        private Set<String> unresolvable(Job job, Job.Pod pod) {
            var never = new HashSet<String>();
            if (job.models().isEmpty() && job.minMemoryMiB() == 0) {
                return never;
            }
            for (var node : inventory.nodes()) {
                long accepted = KubernetesDefaultPlacer.acceptedCards(job, node);
                if (Long.bitCount(accepted) < pod.gpus() || (pod.gpus() == 0 && !job.models().isEmpty() && accepted == 0)) {
                    never.add(node.name());
                }
            }
            return never;
        }

        /** A preemption that did not stand: the job runs on, untouched. */
        private void restore(Running run) {
            run.run().placements().forEach(p -> cluster.take(p.node(), p.mask(), run.job().priority()));
            running.add(run);
        }

        /** The job stopped at {@code now}: it keeps what it saved at its last checkpoint and waits to run again. */
        private void evict(Running run, double now) {
            var job = run.job();
            var done = progress.computeIfAbsent(job.id(), id -> new Progress(job.work()));
            double elapsed = now - run.run().start();
            double saved = checkpoints.saved(Math.max(0, elapsed - run.overhead()));
            done.remaining = Math.max(0, done.remaining - saved * run.rate());
            done.evictions++;
            done.lostGpuSeconds += job.gpus() * (elapsed - saved);
            done.usedGpuSeconds += job.gpus() * elapsed;
            pending.add(job);
            evicted.add(job);
        }

        /** When the running job last saved its work: its last checkpoint, else the start of this run. */
        private double lastSaved(Running run, double now) {
            double progressed = Math.max(0, now - run.run().start() - run.overhead());
            double saved = checkpoints.saved(progressed);
            return saved > 0 ? run.run().start() + run.overhead() + saved : run.run().start();
        }

        private Running start(Job job, double now, List<Placer.PodPlacement> placements) {
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
            double rate = slowest * communication.factor(job, placements, inventory);
            var earlier = progress.get(job.id());
            double overhead = earlier == null ? 0 : checkpoints.restartOverheadSeconds();
            double duration = overhead + (earlier == null ? job.work() : earlier.remaining) / rate;
            if (!(duration >= 0) || Double.isInfinite(duration)) {
                throw new IllegalStateException("job " + job.id() + " (" + job.type() + ") gets no finite duration on " + models);
            }
            var run = earlier == null
                    ? new JobRun(job, now, now + duration, placements, models, top, CommunicationModel.onNvlink(job, placements),
                            crossRackGb(job, placements, duration))
                    : new JobRun(job, now, now + duration, placements, models, top, CommunicationModel.onNvlink(job, placements),
                            crossRackGb(job, placements, duration), earlier.evictions,
                            (earlier.lostGpuSeconds + job.gpus() * overhead) / 3600, earlier.usedGpuSeconds / 3600);
            return new Running(run, overhead, rate);
        }
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
