package io.hetgpu.simulator;

import io.hetgpu.extender.service.JobPreemptionStep;
import io.hetgpu.extender.service.PreemptionChoice;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.filter.NodeFit;
import io.hetgpu.kubescheduler.preemption.DefaultPreemption;
import io.hetgpu.kubescheduler.preemption.RunningPod;
import io.hetgpu.kubescheduler.preemption.Victims;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
 * <p>How the pods of a job of several get their nodes is the scheduler's {@link Admission}. kube-scheduler alone places
 * them pod by pod: each pod that fits is bound and holds its GPUs, and the job runs once its last pod is placed (until
 * then it is half-placed). With whole-workload admission (Kueue, the Workload API) all pods are placed together or none.
 * hetgpu plans the job whole through the extender's own planner and commits the plan at once, or the job waits holding
 * nothing.
 *
 * <p>A scheduler that preempts runs kube-scheduler's DefaultPreemption for a pod no node takes, through the
 * kube-scheduler model's own step, with the extender's preempt verb when it has one: the victims' jobs are evicted
 * (a ps/worker job that loses any pod restarts whole, as its training cannot go on without it; a half-placed job's pods
 * are victims like any running pod) and resume later from their last checkpoint ({@link Checkpoints}); the preemptor
 * goes to its nominated node. Pod by pod, each pod's evictions stand on their own. For a whole workload, the evictions
 * of all its pods stand only if every pod then finds a place, as Kueue preempts for a whole workload; otherwise nothing
 * is evicted. For a job hetgpu plans, the extender's job preemption rule chooses the victims on the nodes its plan
 * needs; kube-scheduler evicts on one node per attempt, and the job's members attempt in turn until the job is placed
 * or no attempt evicts anything more (see {@link Run#tryPlanned}).
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
     * @param neverPlaced jobs never started (too big for any node, cards the cluster lacks, or left half-placed when
     *                    nothing was left to run), left out of {@code runs}
     * @param unfinished  what the jobs never started spent half-placed, one entry for each that ever was
     */
    public record Result(String policy, List<JobRun> runs, int neverPlaced, List<JobRun.HalfPlaced> unfinished) {
        public Result {
            runs = List.copyOf(runs);
            unfinished = List.copyOf(unfinished);
        }
    }

    public Result run(List<Job> jobs, Placer placer) {
        return new Run(placer).play(jobs);
    }

    /** Pods on nodes, as preemption sees them: a job's run, or the pods of a half-placed job. */
    private sealed interface Holder {
        Job job();

        /** Each placed pod's index and placement. */
        Map<Integer, Placer.PodPlacement> placed();

        /** When the pod of this index was bound, seconds into the trace. */
        double placedAt(int podIndex);
    }

    /**
     * A job's run in progress.
     *
     * @param run      what it will have been when it ends uneventfully
     * @param overhead seconds of restart overhead at its start, before it makes progress
     * @param rate     reference-card seconds of work it does per second
     */
    private record Running(JobRun run, double overhead, double rate) implements Holder {
        @Override
        public Job job() {
            return run.job();
        }

        @Override
        public Map<Integer, Placer.PodPlacement> placed() {
            var placed = new LinkedHashMap<Integer, Placer.PodPlacement>();
            for (int i = 0; i < run.placements().size(); i++) {
                placed.put(i, run.placements().get(i));
            }
            return placed;
        }

        @Override
        public double placedAt(int podIndex) {
            return run.start();
        }
    }

    /** A job some of whose pods are bound while others wait for a node (pod by pod only): they hold their GPUs, idle. */
    private static final class Partial implements Holder {
        private final Job job;
        private final Placer.PodPlacement[] placements;
        private final double[] placedAt;
        private int count;

        Partial(Job job) {
            this.job = job;
            this.placements = new Placer.PodPlacement[job.pods().size()];
            this.placedAt = new double[job.pods().size()];
        }

        @Override
        public Job job() {
            return job;
        }

        @Override
        public Map<Integer, Placer.PodPlacement> placed() {
            var placed = new LinkedHashMap<Integer, Placer.PodPlacement>();
            for (int i = 0; i < placements.length; i++) {
                if (placements[i] != null) {
                    placed.put(i, placements[i]);
                }
            }
            return placed;
        }

        @Override
        public double placedAt(int podIndex) {
            return placedAt[podIndex];
        }

        boolean holds(int podIndex) {
            return placements[podIndex] != null;
        }

        void place(int podIndex, Placer.PodPlacement placement, double now) {
            placements[podIndex] = placement;
            placedAt[podIndex] = now;
            count++;
        }

        boolean complete() {
            return count == placements.length;
        }

        /** Every pod's placement in pod order, once complete. */
        List<Placer.PodPlacement> all() {
            return List.of(placements);
        }

        /** What the stretch it was half-placed cost, ending now: nothing if it ends the moment it began. */
        JobRun.HalfPlaced until(double now) {
            double first = Double.MAX_VALUE;
            double firstGpus = Double.MAX_VALUE;
            double gpuSeconds = 0;
            for (int i = 0; i < placements.length; i++) {
                if (placements[i] != null) {
                    first = Math.min(first, placedAt[i]);
                    int gpus = placements[i].set().size();
                    if (gpus > 0) {
                        firstGpus = Math.min(firstGpus, placedAt[i]);
                        gpuSeconds += gpus * (now - placedAt[i]);
                    }
                }
            }
            if (first >= now) {
                return JobRun.HalfPlaced.NONE;
            }
            return new JobRun.HalfPlaced(gpuSeconds / 3600, (now - first) / 3600, firstGpus < now ? (now - firstGpus) / 3600 : 0);
        }
    }

    /** What a job has done in the runs it lost to evictions. */
    private static final class Progress {
        double remaining;
        int evictions;
        double lostGpuSeconds;
        double usedGpuSeconds;
        /** Whether it ever ran: a job evicted only while half-placed starts afresh, with no restart overhead. */
        boolean ran;

        Progress(double work) {
            this.remaining = work;
        }
    }

    /** kube-scheduler's choice for a preemptor: the node it nominates, and the holders of the victims there. */
    private record Nomination(int node, List<Holder> victims) {
    }

    /** One trace under one scheduler: the only mutable state of a simulation. */
    private final class Run {

        private final Placer placer;
        private final Preempting preempting;
        private final Admission admission;
        private final ClusterState cluster = new ClusterState(inventory);
        private final PriorityQueue<Running> running = new PriorityQueue<>(
                Comparator.comparingDouble((Running r) -> r.run().end()).thenComparingInt(r -> r.job().id()));
        /** Half-placed jobs by ID, in the order they got their first pod. */
        private final Map<Integer, Partial> partial = new LinkedHashMap<>();
        private final TreeSet<Job> pending = new TreeSet<>(QUEUE_ORDER);
        private final Map<Integer, Progress> progress = new HashMap<>();
        private final Map<Integer, JobRun.HalfPlaced> halfPlaced = new HashMap<>();
        private final List<Job> evicted = new ArrayList<>();

        Run(Placer placer) {
            this.placer = placer;
            this.preempting = placer.preempting();
            this.admission = placer.admission();
        }

        /** Into the queue; a job of one pod is counted waiting, as the extender counts pods in no job that wait. */
        private void enqueue(Job job) {
            if (pending.add(job) && !job.distributed()) {
                cluster.waiting(job.gpus(), 1);
            }
        }

        private void dequeue(Job job) {
            if (pending.remove(job) && !job.distributed()) {
                cluster.waiting(job.gpus(), -1);
            }
        }

        Result play(List<Job> jobs) {
            var arrivals = jobs.stream().sorted(Comparator.comparingDouble(Job::arrival).thenComparingInt(Job::id)).toList();
            var runs = new ArrayList<JobRun>(jobs.size());
            var arrived = new ArrayList<Job>();
            boolean started = false;
            int next = 0;
            double now = 0;
            while (next < arrivals.size() || !running.isEmpty()) {
                now = Math.min(next < arrivals.size() ? arrivals.get(next).arrival() : Double.MAX_VALUE,
                        running.isEmpty() ? Double.MAX_VALUE : running.peek().run().end());
                boolean freed = false;
                while (!running.isEmpty() && running.peek().run().end() <= now) {
                    var done = running.poll();
                    done.run().placements().forEach(p -> cluster.give(p.node(), p.mask(), done.job().priority()));
                    runs.add(done.run());
                    placer.ended(ended(done, done.run().end(), false));
                    freed = true;
                }
                arrived.clear();
                while (next < arrivals.size() && arrivals.get(next).arrival() <= now) {
                    enqueue(arrivals.get(next));
                    arrived.add(arrivals.get(next++));
                }
                // Jobs that failed before fail again until GPUs are freed: only newcomers need a try then. Under
                // preemption, a pod bound since is a new possible victim for the pending jobs that outrank it.
                List<Job> candidates;
                if (freed) {
                    candidates = new ArrayList<>(pending);
                } else if (started && preempting instanceof Preempting.Kube) {
                    int lowest = lowestHolderPriority();
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
            // Jobs still half-placed with nothing left to run wait for ever, as they would on the cluster.
            var unfinished = new ArrayList<JobRun.HalfPlaced>();
            for (var left : partial.values()) {
                var spent = halfPlaced.getOrDefault(left.job().id(), JobRun.HalfPlaced.NONE).plus(left.until(now));
                if (spent.stalled()) {
                    unfinished.add(spent);
                }
            }
            return new Result(placer.name(), runs, pending.size(), unfinished);
        }

        private int lowestHolderPriority() {
            int lowest = running.stream().mapToInt(r -> r.job().priority()).min().orElse(Integer.MAX_VALUE);
            for (var half : partial.values()) {
                lowest = Math.min(lowest, half.job().priority());
            }
            return lowest;
        }

        /** Whether the scheduler preempts and some pod on a node has a lower priority than the job's. */
        private boolean mayPreempt(Job job) {
            return preempting instanceof Preempting.Kube && job.priority() > lowestHolderPriority();
        }

        /** Tries the job's pods as the scheduler's admission does; true when a pod of it was bound. */
        private boolean tryStart(Job job, double now) {
            return switch (admission) {
                case Admission.PodByPod pods -> tryPods(job, now);
                case Admission.WholeWorkload whole -> tryWhole(job, now);
                case Admission.Planned planned -> job.distributed() ? tryPlanned(job, planned.jobs(), now) : tryWhole(job, now);
            };
        }

        /**
         * kube-scheduler alone: each pod not yet bound is tried on its own, preempting for itself; a pod that fits is bound
         * whether or not the others do. The job starts once its last pod is bound.
         */
        private boolean tryPods(Job job, double now) {
            var half = partial.get(job.id());
            boolean bound = false;
            for (int i = 0; i < job.pods().size(); i++) {
                if (half != null && half.holds(i)) {
                    continue;
                }
                boolean preempts = mayPreempt(job);
                if (job.pods().get(i).gpus() > cluster.freeGpus() && !preempts) {
                    continue;
                }
                var earlier = half == null ? List.<Placer.PodPlacement>of() : List.copyOf(half.placed().values());
                var placement = placer.place(job, i, earlier, cluster);
                if (placement == null && preempts && preempting instanceof Preempting.Kube kube) {
                    // The job's bound pods are on their nodes already, at its own priority: never victims.
                    var nomination = nominate(kube, job, i, List.of(), now);
                    if (nomination != null) {
                        nomination.victims().forEach(victim -> {
                            release(victim);
                            evict(victim, now);
                        });
                        placement = onNominated(job, i, earlier, nomination.node());
                    }
                }
                if (placement == null) {
                    continue;
                }
                cluster.take(placement.node(), placement.mask(), job.priority());
                if (half == null) {
                    half = new Partial(job);
                    partial.put(job.id(), half);
                }
                half.place(i, placement, now);
                bound = true;
            }
            if (half != null && half.complete()) {
                partial.remove(job.id());
                spentHalfPlaced(job, half.until(now));
                dequeue(job);
                running.add(start(job, now, half.all()));
            }
            return bound;
        }

        /** Places every pod of the job, preempting when the scheduler does; or none, evicting nothing. */
        private boolean tryWhole(Job job, double now) {
            if (job.gpus() > cluster.freeGpus() && !mayPreempt(job)) {
                return false;
            }
            var placed = new ArrayList<Placer.PodPlacement>(job.pods().size());
            var victims = new LinkedHashSet<Holder>();
            for (int i = 0; i < job.pods().size(); i++) {
                var placement = placer.place(job, i, placed, cluster);
                if (placement == null && preempting instanceof Preempting.Kube kube && mayPreempt(job)) {
                    var nomination = nominate(kube, job, i, placed, now);
                    if (nomination != null) {
                        // Stopped for now: they are evicted only if the whole job then starts.
                        nomination.victims().forEach(victim -> {
                            release(victim);
                            victims.add(victim);
                        });
                        placement = onNominated(job, i, placed, nomination.node());
                    }
                }
                if (placement == null) {
                    placed.forEach(p -> cluster.give(p.node(), p.mask(), job.priority()));
                    victims.forEach(this::restore);
                    return false;
                }
                cluster.take(placement.node(), placement.mask(), job.priority());
                placed.add(placement);
            }
            victims.forEach(victim -> evict(victim, now));
            dequeue(job);
            running.add(start(job, now, placed));
            return true;
        }

        /**
         * hetgpu: the extender plans every pod of the job at once and the plan is committed whole (the extender holds its
         * GPUs and steers each member to its seat; the members come one after another, well inside the plan's deadline, so
         * the simulation binds them together), or the job waits, holding nothing.
         *
         * <p>Failing that, under preemption, kube-scheduler asks the preempt verb for one member at a time and the verb
         * answers for the job ({@link JobPlacing#preempt}), keeping only the candidates where the job's plan needs
         * evictions; kube-scheduler evicts on the one node it picks among them per attempt. The job's members then attempt
         * in turn, each a filter (the plan) and if that fails a preemption, until the job is placed or every member has
         * attempted since the last eviction: the victims are all of lower priority, so kube-scheduler's queue brings the
         * job's members back before any victim, and the model runs those attempts back to back at the same instant.
         * Evictions stand even if the job still does not start, as they would on the cluster.
         */
        private boolean tryPlanned(Job job, JobPlacing jobs, double now) {
            if (job.gpus() > cluster.freeGpus() && !mayPreempt(job)) {
                return false;
            }
            var seats = jobs.plan(job, cluster);
            int members = job.pods().size();
            int attemptsLeft = members * Math.max(1, inventory.nodes().size());
            int sinceEviction = 0;
            for (int member = 0; seats == null && sinceEviction < members && attemptsLeft-- > 0; member = (member + 1) % members) {
                if (!(preempting instanceof Preempting.Kube kube) || !mayPreempt(job)) {
                    break;
                }
                var nomination = nominate(kube, job, member, List.of(), now, jobVerb(job, jobs, now));
                if (nomination == null) {
                    sinceEviction++;
                    continue;
                }
                nomination.victims().forEach(victim -> {
                    release(victim);
                    evict(victim, now);
                });
                sinceEviction = 0;
                seats = jobs.plan(job, cluster);
            }
            if (seats == null) {
                return false;
            }
            seats.forEach(seat -> cluster.take(seat.node(), seat.mask(), job.priority()));
            dequeue(job);
            running.add(start(job, now, seats));
            return true;
        }

        /**
         * The extender's preempt verb for a member of a job it plans: its job rule's victims on each candidate where the
         * plan needs evictions (kube-scheduler evicts the extender's victims in place of its own), none elsewhere.
         */
        private DefaultPreemption.Extender jobVerb(Job job, JobPlacing jobs, double now) {
            return candidates -> {
                var victims = new ArrayList<JobPreemptionStep.Victim>();
                var pods = new HashMap<String, RunningPod>();
                forEachPod((holder, index, placement, pod) -> {
                    pods.put(pod.uid(), pod);
                    if (holder.job().priority() < job.priority() && placement.set().size() > 0) {
                        victims.add(new JobPreemptionStep.Victim(pod.uid(), inventory.nodes().get(placement.node()).name(),
                                holder.job().distributed() ? "job-" + holder.job().id() : "", placement.set().size(), placement.mask(),
                                lostBy(holder, index, now)));
                    }
                });
                if (!(jobs.preempt(job, cluster, victims) instanceof JobPreemptionStep.Evict evict)) {
                    return Map.of();
                }
                var kept = new LinkedHashMap<String, Victims>();
                candidates.forEach((node, proposed) -> {
                    var uids = evict.victimsByNode().get(node);
                    if (uids != null) {
                        var chosen = new ArrayList<>(uids.stream().map(pods::get).toList());
                        chosen.sort(RunningPod::moreImportantFirst);
                        kept.put(node, new Victims(chosen, proposed.pdbViolations()));
                    }
                });
                return kept;
            };
        }

        /** What a pod on a node is, as kube-scheduler's model reads it. */
        @FunctionalInterface
        private interface PodVisitor {
            void visit(Holder holder, int podIndex, Placer.PodPlacement placement, RunningPod pod);
        }

        /** Every pod on a node: those of running jobs and of half-placed ones. */
        private void forEachPod(PodVisitor visitor) {
            var holders = new ArrayList<Holder>(running);
            holders.addAll(partial.values());
            for (var holder : holders) {
                holder.placed().forEach((index, placement) ->
                        visitor.visit(holder, index, placement, KubeObjects.running(holder.job(), index, holder.placedAt(index))));
            }
        }

        /** The work the pod loses if evicted now, since it last saved: nothing for a pod of a job that never started. */
        private long lostBy(Holder holder, int podIndex, double now) {
            if (!(holder instanceof Running run)) {
                return 0;
            }
            int gpus = run.job().pods().get(podIndex).gpus();
            return PreemptionChoice.gpuSecondsLost(gpus, KubeObjects.instant(lastSaved(run, now)), KubeObjects.instant(now));
        }

        private Nomination nominate(Preempting.Kube kube, Job job, int podIndex, List<Placer.PodPlacement> earlier, double now) {
            return nominate(kube, job, podIndex, earlier, now, null);
        }

        /**
         * kube-scheduler's DefaultPreemption for one pod: the model's step picks a node and victims, with the extender's
         * verb ({@code verb}, or the scheduler's own preempt verb when null). Null when nothing can be evicted for it.
         *
         * @param earlier where the pods of its whole workload placed so far went: on their nodes at its own priority, never
         *                victims
         */
        private Nomination nominate(Preempting.Kube kube, Job job, int podIndex, List<Placer.PodPlacement> earlier, double now,
                                    DefaultPreemption.Extender verb) {
            var pod = job.pods().get(podIndex);
            var podsByNode = new HashMap<String, List<RunningPod>>();
            var facts = new HashMap<String, PreemptVerb.VictimFacts>();
            var holders = new HashMap<String, Holder>();
            var jobLost = new HashMap<Integer, Long>();
            forEachPod((holder, index, placement, running) -> jobLost.merge(holder.job().id(), lostBy(holder, index, now), Long::sum));
            forEachPod((holder, index, placement, running) -> {
                var node = inventory.nodes().get(placement.node()).name();
                podsByNode.computeIfAbsent(node, k -> new ArrayList<>()).add(running);
                var victimJob = holder.job();
                // A pod of a job of several costs its whole job, which restarts whole, as the extender counts it.
                facts.put(running.uid(), new PreemptVerb.VictimFacts(placement.mask(),
                        victimJob.distributed() ? jobLost.get(victimJob.id()) : lostBy(holder, index, now),
                        victimJob.distributed() ? "job-" + victimJob.id() : ""));
                holders.put(running.uid(), holder);
            });
            var masks = new HashMap<String, Long>();
            facts.forEach((uid, fact) -> masks.put(uid, fact.mask()));
            for (int i = 0; i < earlier.size(); i++) {
                var node = inventory.nodes().get(earlier.get(i).node()).name();
                podsByNode.computeIfAbsent(node, k -> new ArrayList<>()).add(KubeObjects.running(job, i, now));
                masks.put(KubeObjects.uid(job, i), earlier.get(i).mask());
            }
            var preemptor = KubeObjects.preemptor(job, podIndex);
            var request = preemptor.pod().request();
            List<DefaultPreemption.Extender> extenders = verb != null ? List.of(verb) : kube.verb() == PreemptVerb.NONE ? List.of()
                    : List.of(candidates -> kube.verb().keep(job, podIndex, earlier, candidates, cluster, facts));
            var outcome = kube.model().preempt(preemptor, kubeNodes, podsByNode, unresolvable(job, pod), List.of(),
                    (node, left) -> NodeFit.insufficientResource(request, node, left.stream().map(RunningPod::request).toList()).isEmpty()
                            && placer.fitsInDryRun(job, podIndex, cluster, cluster.indexOf(node.name()),
                                    freedBy(podsByNode.getOrDefault(node.name(), List.of()), left, masks)),
                    extenders);
            if (!(outcome instanceof DefaultPreemption.Outcome.Nominate nominate)) {
                return null;
            }
            var victims = new LinkedHashSet<Holder>();
            nominate.victims().pods().forEach(victim -> victims.add(holders.get(victim.uid())));
            return new Nomination(cluster.indexOf(nominate.node()), List.copyOf(victims));
        }

        /** The GPUs (a position mask) of a node's pods that preemption's dry run removed: on it, and not left. */
        private static long freedBy(List<RunningPod> onNode, List<RunningPod> left, Map<String, Long> masks) {
            long freed = 0;
            for (var pod : onNode) {
                freed |= masks.getOrDefault(pod.uid(), 0L);
            }
            for (var pod : left) {
                freed &= ~masks.getOrDefault(pod.uid(), 0L);
            }
            return freed;
        }

        /** kube-scheduler tries a preemptor's nominated node first, then every node. */
        private Placer.PodPlacement onNominated(Job job, int podIndex, List<Placer.PodPlacement> earlier, int node) {
            var onNominated = placer.placeOn(job, podIndex, earlier, cluster, node);
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

        /** Stops the holder's pods, for now: its GPUs are free; {@link #evict} or {@link #restore} follows. */
        private void release(Holder holder) {
            switch (holder) {
                case Running run -> running.remove(run);
                case Partial half -> partial.remove(half.job().id());
            }
            holder.placed().values().forEach(p -> cluster.give(p.node(), p.mask(), holder.job().priority()));
        }

        /** A preemption that did not stand: the job runs on, untouched. */
        private void restore(Holder holder) {
            holder.placed().values().forEach(p -> cluster.take(p.node(), p.mask(), holder.job().priority()));
            switch (holder) {
                case Running run -> running.add(run);
                case Partial half -> partial.put(half.job().id(), half);
            }
        }

        private void evict(Holder holder, double now) {
            switch (holder) {
                case Running run -> evictRun(run, now);
                case Partial half -> {
                    // Its pods go, and its operator creates them again: the job waits whole, having done nothing.
                    spentHalfPlaced(half.job(), half.until(now));
                    progress.computeIfAbsent(half.job().id(), id -> new Progress(half.job().work())).evictions++;
                    evicted.add(half.job());
                }
            }
        }

        private void spentHalfPlaced(Job job, JobRun.HalfPlaced spent) {
            if (spent.stalled()) {
                halfPlaced.merge(job.id(), spent, JobRun.HalfPlaced::plus);
            }
        }

        /** The job stopped at {@code now}: it keeps what it saved at its last checkpoint and waits to run again. */
        private void evictRun(Running run, double now) {
            var job = run.job();
            var done = progress.computeIfAbsent(job.id(), id -> new Progress(job.work()));
            double elapsed = now - run.run().start();
            double saved = checkpoints.saved(Math.max(0, elapsed - run.overhead()));
            placer.ended(ended(run, now, true));
            done.remaining = Math.max(0, done.remaining - saved * run.rate());
            done.evictions++;
            done.lostGpuSeconds += job.gpus() * (elapsed - saved);
            done.usedGpuSeconds += job.gpus() * elapsed;
            done.ran = true;
            enqueue(job);
            evicted.add(job);
        }

        /** The run as its pods' ends show it: each GPU pod's slowest card, its run time, and the work it did. */
        private EndedRun ended(Running run, double end, boolean evicted) {
            var placements = run.run().placements();
            var pods = new ArrayList<EndedRun.Pod>(placements.size());
            for (int i = 0; i < placements.size(); i++) {
                var placement = placements.get(i);
                var gpus = inventory.nodes().get(placement.node()).gpus();
                String slowest = null;
                int lowest = Integer.MAX_VALUE;
                for (int position : placement.set().positions()) {
                    int rank = gpus.tiers().get(position).rank();
                    if (rank < lowest) {
                        lowest = rank;
                        slowest = gpus.topology().device(position).model();
                    }
                }
                if (slowest != null) {
                    pods.add(new EndedRun.Pod(i, placement.set().size(), slowest));
                }
            }
            double seconds = end - run.run().start();
            return new EndedRun(run.job(), pods, seconds, Math.max(0, seconds - run.overhead()) * run.rate(), end, evicted);
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
            double overhead = earlier == null || !earlier.ran ? 0 : checkpoints.restartOverheadSeconds();
            double duration = overhead + (earlier == null ? job.work() : earlier.remaining) / rate;
            if (!(duration >= 0) || Double.isInfinite(duration)) {
                throw new IllegalStateException("job " + job.id() + " (" + job.type() + ") gets no finite duration on " + models);
            }
            var half = halfPlaced.getOrDefault(job.id(), JobRun.HalfPlaced.NONE);
            var run = earlier == null
                    ? new JobRun(job, now, now + duration, placements, models, top, CommunicationModel.onNvlink(job, placements),
                            crossRackGb(job, placements, duration), 0, 0, 0, half)
                    : new JobRun(job, now, now + duration, placements, models, top, CommunicationModel.onNvlink(job, placements),
                            crossRackGb(job, placements, duration), earlier.evictions,
                            (earlier.lostGpuSeconds + job.gpus() * overhead) / 3600, earlier.usedGpuSeconds / 3600, half);
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
