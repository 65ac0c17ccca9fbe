package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.BoundPods;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaPod;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims;
import io.hetgpu.extender.wire.ExtenderPreemptionResult;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The preempt verb's rule (kube-scheduler's ProcessPreemption). kube-scheduler proposes, per node, the pods it
 * would evict; the extender keeps a node only if evicting them frees a GPU set the preemptor can use
 * (the right cards, an NVLink set when asked), so that no work is evicted for GPUs that then do not help;
 * among those, {@link PreemptionChoice} keeps the newest cards for a pod that wants them and the least work lost.
 */
public final class Preemption {

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    private final Function<PodRequest, ClosedTier> closedTier;
    private final Clock clock;
    private final Consumer<PreemptionAdvice> onAdvised;
    private final CacheGate gate;
    private final WholeJobs jobs;

    /**
     * @param closedTier the tier a high-priority reserve closes to a pod now ({@link ExtenderService#closedTier}),
     *                   so that preemption never frees cards the filter would then refuse the pod
     */
    public Preemption(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                      Function<PodRequest, ClosedTier> closedTier, Clock clock, Consumer<PreemptionAdvice> onAdvised) {
        this(cluster, parser, nodes, policy, closedTier, clock, onAdvised, new CacheGate(cluster));
    }

    /** With {@code gate} refusing answers until the caches have synced (shared with the other verbs). */
    public Preemption(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                      Function<PodRequest, ClosedTier> closedTier, Clock clock, Consumer<PreemptionAdvice> onAdvised, CacheGate gate) {
        this(cluster, parser, nodes, policy, closedTier, clock, onAdvised, gate, WholeJobs.off());
    }

    /** With {@code jobs}: a member of a job of several preempts for its job as a whole ({@link JobPreemption}). */
    public Preemption(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                      Function<PodRequest, ClosedTier> closedTier, Clock clock, Consumer<PreemptionAdvice> onAdvised, CacheGate gate,
                      WholeJobs jobs) {
        this.jobs = jobs;
        this.gate = gate;
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
        this.closedTier = closedTier;
        this.clock = clock;
        this.onAdvised = onAdvised;
    }

    /**
     * The nodes kept as candidates, with kube-scheduler's victims on each.
     *
     * @throws CacheGate.NotSynced before the caches have synced: without the pods bound to each node, the candidates cannot
     *         be judged. kube-scheduler's answer has no Error field; an HTTP error fails its preemption for this attempt (unless
     *         the extender is ignorable), and it tries again later, which is what is wanted.
     */
    public ExtenderPreemptionResult answer(ExtenderPreemptionArgs args) {
        gate.check("preempt");
        return new ExtenderPreemptionResult(decide(args));
    }

    /**
     * kube-scheduler 1.38+ also proposes nodes where its own filters fit the pod without any eviction but an extender's
     * filter refused it, each with an empty victim list: it expects the extender to name the victims there, and drops a
     * node that comes back from every extender still without any (an empty list where it sent one is no error). For such
     * a node hetgpu names the pods whose GPUs the pod needs ({@link VictimsToFree}), then judges it like any other; a node
     * where even that leaves the pod no usable GPUs is left out, which is how an extender refuses a candidate. One where
     * the pod fits as it is (it changed since the filter) comes back as it came, without victims.
     */
    Map<String, MetaVictims> decide(ExtenderPreemptionArgs args) {
        var proposedPods = new LinkedHashMap<String, List<Pod>>();
        var pdb = new LinkedHashMap<String, Long>();
        var metaProposals = new LinkedHashMap<String, MetaVictims>();
        if (args.nodeNameToVictims() != null) {
            args.nodeNameToVictims().forEach((node, victims) -> {
                proposedPods.put(node, victims == null || victims.pods() == null ? List.of() : victims.pods());
                pdb.put(node, victims == null ? 0 : victims.numPdbViolations());
            });
        } else if (args.nodeNameToMetaVictims() != null) {
            for (var entry : args.nodeNameToMetaVictims().entrySet()) {
                var victims = entry.getValue() == null ? new MetaVictims(List.of(), 0) : entry.getValue();
                metaProposals.put(entry.getKey(), victims);
                pdb.put(entry.getKey(), victims.numPdbViolations());
            }
        }
        PodRequest pod;
        try {
            pod = parser.parse(args.pod());
        } catch (InvalidPodRequestException e) {
            return Map.of();
        }
        var now = clock.instant();
        if (!pdb.isEmpty()) {
            var forJob = jobs.preemption(args.pod(), pod, closedTier, now);
            if (forJob != null) {
                return forJob(pod, forJob, pdb);
            }
        }
        // The reserve's closed tier depends on the pod and the cluster, not on the node: counted once per answer.
        var closed = pod.needsGpus() && !pdb.isEmpty() ? closedTier.apply(pod) : ClosedTier.NONE;
        var proposals = new ArrayList<PreemptionStep.Proposal>();
        var victimsByNode = new LinkedHashMap<String, List<String>>();
        for (var node : pdb.keySet()) {
            var metaVictims = metaProposals.get(node);
            List<String> uids;
            if (metaVictims != null) {
                uids = metaVictims.pods() == null ? List.of() : metaVictims.pods().stream().map(MetaPod::uid).toList();
            } else {
                uids = proposedPods.get(node).stream().map(victim -> victim.getMetadata().getUid()).toList();
            }
            if (uids.isEmpty() && pod.needsGpus()) {
                var chosen = victimsToFree(node, pod, closed);
                uids = chosen.victims();
                pdb.put(node, chosen.budgetsBroken());
            }
            victimsByNode.put(node, uids);
            proposals.add(new PreemptionStep.Proposal(node, pod.needsGpus() ? stateAfter(node, uids) : null,
                    pod.needsGpus() ? reachable(node, pod.specPriority(), uids) : null, workLost(node, uids, proposedPods.get(node), now),
                    pdb.get(node)));
        }
        var verdict = PreemptionStep.judge(policy, pod, closed, cluster.contextOf(pod), proposals);
        var kept = new LinkedHashMap<String, MetaVictims>();
        var advice = new ArrayList<PreemptionAdvice.Kept>();
        for (var proposal : proposals) {
            if (verdict.kept().contains(proposal.node())) {
                var uids = victimsByNode.get(proposal.node());
                kept.put(proposal.node(), new MetaVictims(uids.stream().map(MetaPod::new).toList(), pdb.get(proposal.node())));
                advice.add(new PreemptionAdvice.Kept(proposal.node(), uids, verdict.freed().getOrDefault(proposal.node(), ""),
                        proposal.gpuSecondsLost()));
            }
        }
        if (!pdb.isEmpty()) {
            onAdvised.accept(new PreemptionAdvice(pod, advice, verdict.refused()));
        }
        return kept;
    }

    /**
     * The candidates where the job's eviction is needed, each with the victims chosen for the job (kube-scheduler takes
     * an extender's victims in place of its own, on the nodes it proposed); none when the job needs no eviction or would
     * not fit whole even so.
     */
    private Map<String, MetaVictims> forJob(PodRequest pod, JobPreemptionStep.Answer answer, Map<String, Long> pdb) {
        var kept = new LinkedHashMap<String, MetaVictims>();
        var advice = new ArrayList<PreemptionAdvice.Kept>();
        var refused = new LinkedHashMap<String, String>();
        switch (answer) {
            case JobPreemptionStep.Nothing nothing -> pdb.keySet().forEach(node -> refused.put(node, "job " + pod.job() + ": " + nothing.why()));
            case JobPreemptionStep.Evict evict -> pdb.forEach((node, violations) -> {
                var victims = evict.victimsByNode().get(node);
                if (victims == null) {
                    refused.put(node, "job " + pod.job() + ": its plan needs no eviction here (evictions needed on "
                            + String.join(", ", evict.victimsByNode().keySet()) + ")");
                } else {
                    kept.put(node, new MetaVictims(victims.stream().map(MetaPod::new).toList(), violations));
                    advice.add(new PreemptionAdvice.Kept(node, victims, "the GPUs job " + pod.job() + "'s plan needs",
                            evict.gpuSecondsLost()));
                }
            });
        }
        onAdvised.accept(new PreemptionAdvice(pod, advice, refused));
        return kept;
    }

    /**
     * GPU-seconds of work the victims lose, each since it last saved it; a victim of a job of several costs its whole job
     * (every pod of it, on any node: a ps/worker job that loses one pod restarts whole), counted once per job.
     */
    private long workLost(String node, List<String> uids, List<Pod> proposed, Instant now) {
        var gpusByUid = new HashMap<String, Integer>();
        cluster.boundPods(node).forEach(bound -> gpusByUid.put(bound.uid(), bound.gpuCount()));
        var podsByUid = new HashMap<String, Pod>();
        if (proposed != null) {
            proposed.forEach(victim -> podsByUid.put(victim.getMetadata().getUid(), victim));
        }
        long lost = 0;
        var jobsCounted = new HashSet<String>();
        for (var uid : uids) {
            var victim = podsByUid.containsKey(uid) ? podsByUid.get(uid) : cluster.podByUid(uid);
            if (victim == null) {
                continue;
            }
            var job = JobMembershipReader.keyOf(victim).orElse("");
            var others = job.isEmpty() ? List.<Pod>of() : cluster.jobPods(job);
            if (others.size() > 1) {
                if (jobsCounted.add(job)) {
                    for (var member : others) {
                        if (BoundPods.holdsResources(member)) {
                            lost += JobPreemption.lostBy(member, gpuCount(member), now);
                        }
                    }
                }
                continue;
            }
            lost += JobPreemption.lostBy(victim, gpusByUid.getOrDefault(uid, 0), now);
        }
        return lost;
    }

    private int gpuCount(Pod pod) {
        try {
            return parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            return 0;
        }
    }

    /**
     * The victims that make room for the pod on a candidate proposed without any, with the PodDisruptionBudgets they
     * break; none where nothing would (or need).
     */
    private VictimsToFree.Choice victimsToFree(String node, PodRequest pod, ClosedTier closed) {
        if (cluster.node(node) == null) {
            return VictimsToFree.Choice.NONE;
        }
        var bound = cluster.boundPods(node);
        return VictimsToFree.choose(bound, pod.specPriority(), cluster.evictableBelow(bound, pod.specPriority()),
                gone -> policy.assess(pod, stateAfter(node, List.copyOf(gone)), closed) instanceof PlacementPolicy.Fit).orElse(VictimsToFree.Choice.NONE);
    }

    /** The node as it would be with the victims' GPUs free; null when the extender does not know the node. */
    private NodeState stateAfter(String nodeName, List<String> victimUids) {
        var victims = new HashSet<>(victimUids);
        return stateWithout(nodeName, pod -> victims.contains(pod.uid()));
    }

    /**
     * The node as it would be with the victims gone and every other pod below {@code priority} that preemption may evict
     * within budgets (the eviction floor's count, so a job's room further is the room the floor saw; a victim a budget
     * guards is gone all the same, as kube-scheduler evicts it); null when the extender does not know the node.
     */
    private NodeState reachable(String nodeName, int priority, List<String> victimUids) {
        var gone = new HashSet<>(cluster.evictableBelow(cluster.boundPods(nodeName), priority));
        gone.addAll(victimUids);
        return stateWithout(nodeName, pod -> gone.contains(pod.uid()));
    }

    private NodeState stateWithout(String nodeName, Predicate<BoundPod> gone) {
        var facts = cluster.node(nodeName);
        if (facts == null) {
            return null;
        }
        List<BoundPod> bound = cluster.boundPods(nodeName);
        var state = nodes.state(facts, bound);
        return state.withFreed(DeviceHoldings.heldBy(state.gpus(), bound, gone));
    }
}
