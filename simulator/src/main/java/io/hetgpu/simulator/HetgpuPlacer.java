package io.hetgpu.simulator;

import io.hetgpu.extender.job.JobPlanner;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.model.WaitingPeer;
import io.hetgpu.extender.policy.ClusterGpus;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.JobPreemptionStep;
import io.hetgpu.extender.service.PolicyStep;
import io.hetgpu.extender.service.PreemptionStep;
import io.hetgpu.kubescheduler.preemption.Victims;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.kubescheduler.selection.HostSelection;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;

/**
 * kube-scheduler with hetgpu's extender, as the test cluster's scheduler runs it: kube-scheduler's own
 * filter (room for the pod's cpu, memory and GPUs) first; the extender's own {@link PlacementPolicy}, through the
 * service's own step ({@link PolicyStep}), filters and scores the nodes left; when more than
 * one fits, each node's total is kube-scheduler's default score plus 10 x {@link KubeScore#EXTENDER_WEIGHT}
 * x hetgpu's score, and ties are broken as its selectHost does. The pod's GPUs are the set the extender offered
 * on that node: its bind verb records them and hetgpu's device plugin gives exactly those (the bind handshake).
 *
 * <p>A job of several pods is planned whole by the extender's own {@link JobPlanner}, with kube-scheduler's cpu and
 * memory fit for each member; the extender steers each member to its seat, so kube-scheduler finds one node for it and
 * scores nothing. It preempts for such a job by the extender's own rule ({@link JobPreemptionStep}).
 */
final class HetgpuPlacer implements Placer, PreemptVerb, JobPlacing {

    private final String name;
    private final PlacementPolicy policy;
    private final JobPlanner planner;
    private final Learning learning;
    private final boolean namesWorkload;
    private final TieBreak ties;
    private final Preempting preempting;

    /**
     * kube-scheduler with DefaultPreemption and the extender's filter, prioritize and preempt verbs.
     *
     * @param namesWorkload whether pods carry {@code hetgpu.io/workload} (their Gavel job type)
     */
    HetgpuPlacer(String name, PlacementPolicy policy, boolean namesWorkload, long seed) {
        this.name = name;
        this.policy = policy;
        this.planner = new JobPlanner(policy);
        this.learning = null;
        this.namesWorkload = namesWorkload;
        this.ties = TieBreak.random(new Random(seed));
        this.preempting = Preempting.Kube.seeded(seed, this);
    }

    /**
     * The same, learning as the extender does: the policy reads {@code learning}'s current table through the extender's
     * own indirection, on every request, and never anything else about how fast jobs run. Pods name their class.
     */
    HetgpuPlacer(String name, PolicySettings settings, Learning learning, long seed) {
        this.name = name;
        this.learning = learning;
        this.policy = new PlacementPolicy(settings, learning.source());
        this.planner = new JobPlanner(policy);
        this.namesWorkload = true;
        this.ties = TieBreak.random(new Random(seed));
        this.preempting = Preempting.Kube.seeded(seed, this);
    }

    /** Without preemption. */
    HetgpuPlacer(String name, PlacementPolicy policy, boolean namesWorkload, TieBreak ties) {
        this.name = name;
        this.policy = policy;
        this.planner = new JobPlanner(policy);
        this.learning = null;
        this.namesWorkload = namesWorkload;
        this.ties = ties;
        this.preempting = Preempting.NEVER;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Preempting preempting() {
        return preempting;
    }

    @Override
    public Admission admission() {
        return new Admission.Planned(this);
    }

    /** What the cluster shows when the job's pods end reaches the learner, as the extender's pod informer would. */
    @Override
    public void ended(EndedRun run) {
        if (learning != null) {
            learning.observe(run);
        }
    }

    @Override
    public Learning.Figures learned() {
        return learning == null ? Learning.Figures.NONE : learning.figures();
    }

    static PodRequest request(Job job, int podIndex, boolean namesWorkload) {
        var pod = job.pods().get(podIndex);
        return new PodRequest("sim", "job-" + job.id() + "-" + podIndex, "", pod.gpus(), job.models(), job.minMemoryMiB(),
                PodRequest.ANY_COMPUTE_CAPABILITY, false, job.priority(), PriorityHint.UNSET, GpuPreference.UNSET,
                job.distributed() ? "job-" + job.id() : "", pod.role(), List.of(),
                namesWorkload ? GavelThroughputs.workloadClass(job.type()) : "");
    }

    static PlacementContext context(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        var peers = new ArrayList<PeerLocation>(earlier.size());
        for (int i = 0; i < earlier.size(); i++) {
            var node = cluster.nodes().get(earlier.get(i).node());
            peers.add(new PeerLocation("job-" + job.id() + "-" + i, node.name(), node.rack(), node.zone()));
        }
        return new PlacementContext(peers, volumes(job), waiting(job, podIndex, earlier));
    }

    /** The job's training data, as the claim's {@code hetgpu.io/data-locality} names its rack. */
    private static List<DataLocality> volumes(Job job) {
        return job.dataRack().isEmpty() ? List.of() : List.of(new DataLocality(Set.of(), Set.of(job.dataRack()), Set.of()));
    }

    /**
     * The job's other pods no node holds yet, in queue order: its operator created them all at once, so they wait in
     * kube-scheduler's queue. Which ones are placed is told by their GPU counts (the pods of one role ask alike).
     */
    private static List<WaitingPeer> waiting(Job job, int podIndex, List<PodPlacement> earlier) {
        var placedSizes = new ArrayList<Integer>(earlier.size());
        earlier.forEach(placement -> placedSizes.add(placement.set().size()));
        var waiting = new ArrayList<WaitingPeer>();
        for (int i = 0; i < job.pods().size(); i++) {
            int gpus = job.pods().get(i).gpus();
            if (i != podIndex && !placedSizes.remove(Integer.valueOf(gpus))) {
                waiting.add(new WaitingPeer("job-" + job.id() + "-" + i, gpus));
            }
        }
        return waiting;
    }

    @Override
    public PodPlacement place(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster) {
        var pod = job.pods().get(podIndex);
        var feasible = new ArrayList<Integer>();
        var states = new ArrayList<NodeState>();
        for (int i = 0; i < cluster.nodes().size(); i++) {
            if (cluster.fits(i, pod)) {
                feasible.add(i);
                states.add(cluster.state(i));
            }
        }
        if (feasible.isEmpty()) {
            return null;
        }
        // The extender's filter and scores in one pass, its own step: its scores depend only on the nodes that pass
        // its filter. A reserve weighs the whole cluster's free top-tier GPUs, as the extender counts them from its informers.
        var request = request(job, podIndex, namesWorkload);
        var table = PolicyStep.scores(policy, request, states, closedTier(request, cluster), context(job, podIndex, earlier, cluster));
        var fitting = new ArrayList<Integer>();
        for (int r = 0; r < table.size(); r++) {
            if (table.candidate(r) != null) {
                fitting.add(r);
            }
        }
        if (fitting.isEmpty()) {
            return null;
        }
        var selection = new HostSelection<Integer>(ties);
        for (int r : fitting) {
            // With one node left kube-scheduler scores nothing; a single offer is chosen whatever its score.
            long score = fitting.size() == 1 ? 0 : KubeScore.of(cluster, feasible.get(r), pod) + 10L * KubeScore.EXTENDER_WEIGHT * table.score(r);
            selection.offer(r, score);
        }
        int row = selection.chosen();
        // The bind handshake: the extender binds and records the set it offered; the device plugin gives exactly that.
        return new PodPlacement(feasible.get(row), table.candidate(row).set());
    }

    /**
     * The tiers closed to the pod, as the extender counts them from its informers: a reserve weighs the whole cluster's
     * free top-tier GPUs; a job headroom (for a pod of several GPUs in no job) the cluster's free GPUs and the smaller
     * pods waiting; an eviction floor
     * (only where this scheduler preempts) what preemption could free.
     */
    ClosedTier closedTier(PodRequest request, ClusterState cluster) {
        Function<Integer, List<NodeState>> reachable = preempting instanceof Preempting.Never ? priority -> List.of() : cluster::reachableBy;
        return PolicyStep.closedTier(policy, request, () -> ClusterGpus.of(cluster.states()).withSmallerWaiting(cluster.waitingGpusBelow(request.gpuCount())),
                () -> TopTierHeadroom.of(cluster.states()), reachable);
    }

    @Override
    public PodPlacement placeOn(Job job, int podIndex, List<PodPlacement> earlier, ClusterState cluster, int node) {
        var pod = job.pods().get(podIndex);
        if (!cluster.fits(node, pod)) {
            return null;
        }
        var request = request(job, podIndex, namesWorkload);
        var table = PolicyStep.scores(policy, request, List.of(cluster.state(node)), closedTier(request, cluster), context(job, podIndex, earlier, cluster));
        var candidate = table.candidate(0);
        return candidate == null ? null : new PodPlacement(node, candidate.set());
    }

    /**
     * The extender's preempt verb through its own step ({@link PreemptionStep}): each candidate judged as it would be
     * without its victims, whose devices the extender reads from the bind handshake's annotation.
     */
    @Override
    public Map<String, Victims> keep(Job job, int podIndex, List<PodPlacement> earlier, Map<String, Victims> candidates,
                                     ClusterState cluster, Map<String, VictimFacts> victims) {
        var request = request(job, podIndex, namesWorkload);
        var closed = closedTier(request, cluster);
        var proposals = new ArrayList<PreemptionStep.Proposal>(candidates.size());
        var reachable = cluster.reachableBy(job.priority());
        candidates.forEach((nodeName, onNode) -> {
            int node = cluster.indexOf(nodeName);
            long freed = 0;
            long lost = 0;
            var jobsCounted = new HashSet<String>();
            for (var victim : onNode.pods()) {
                var facts = victims.get(victim.uid());
                freed |= facts.mask();
                if (facts.job().isEmpty() || jobsCounted.add(facts.job())) {
                    lost += facts.gpuSecondsLost();
                }
            }
            proposals.add(new PreemptionStep.Proposal(nodeName, cluster.state(node).withFreed(freed), reachable.get(node), lost, 0));
        });
        var kept = new LinkedHashMap<String, Victims>();
        PreemptionStep.judge(policy, request, closed, context(job, podIndex, earlier, cluster), proposals).kept().forEach(node -> kept.put(node, candidates.get(node)));
        return kept;
    }

    @Override
    public List<PodPlacement> plan(Job job, ClusterState cluster) {
        var members = members(job);
        var whole = plannedJob(job, members, cluster);
        var states = cluster.states();
        // The filter's own order: a job that must leave room waits before any seat is looked for.
        if (!planner.heldBack(whole, states).isEmpty()) {
            return null;
        }
        var outcome = planner.plan(whole, states, (member, node, planned) -> {
            var there = planned.stream().filter(seat -> seat.nodeName().equals(node)).map(seat -> pod(seat.member())).toList();
            return cluster.fitsBeside(cluster.indexOf(node), pod(member), there);
        });
        if (!(outcome instanceof JobPlanner.Planned planned)) {
            return null;
        }
        var placements = new ArrayList<PodPlacement>(members.size());
        for (var member : members) {
            var seat = planned.seatOf(member.name());
            placements.add(new PodPlacement(cluster.indexOf(seat.nodeName()), seat.set()));
        }
        return placements;
    }

    /**
     * The extender's rule over the simulated cluster. Its plans, as the preempt verb's, take every member anywhere the
     * policy lets it go: whether kube-scheduler's own filters pass the seat is asked when the job is placed.
     */
    @Override
    public JobPreemptionStep.Answer preempt(Job job, ClusterState cluster, List<JobPreemptionStep.Victim> victims) {
        var planned = plannedJob(job, members(job), cluster);
        return JobPreemptionStep.answer(states -> planner.plan(planned, states, JobPlanner.MemberFit.ANY), cluster.states(), victims,
                planned.members().stream().anyMatch(planner::wantsNewest));
    }

    private List<PodRequest> members(Job job) {
        var members = new ArrayList<PodRequest>(job.pods().size());
        for (int i = 0; i < job.pods().size(); i++) {
            members.add(request(job, i, namesWorkload));
        }
        return members;
    }

    /**
     * The job as the planner takes it: no member placed yet (its peers are those planned before it), near its data, and
     * the tiers closed to each member as the filter closes them now (one count of the cluster for all the plans of an
     * answer, as they are all about the same moment).
     */
    private JobPlanner.Job plannedJob(Job job, List<PodRequest> members, ClusterState cluster) {
        var closed = new HashMap<PodRequest, ClosedTier>();
        var context = new PlacementContext(List.of(), volumes(job), List.of());
        return new JobPlanner.Job("sim/job-" + job.id(), members, member -> context,
                member -> closed.computeIfAbsent(member, m -> closedTier(m, cluster)));
    }

    /** A member's cpu and memory follow from its GPU count, as every simulated pod's. */
    private static Job.Pod pod(PodRequest member) {
        return new Job.Pod(member.gpuCount(), member.role());
    }
}
