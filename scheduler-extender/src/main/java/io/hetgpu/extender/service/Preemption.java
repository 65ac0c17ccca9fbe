package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.GpuPreference;
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
import java.util.OptionalInt;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The preempt verb's rule (kube-scheduler's ProcessPreemption). kube-scheduler proposes, per node, the pods it
 * would evict; the extender keeps a node only if evicting them frees a GPU set the preemptor can use
 * (the right cards, an NVLink set when asked), so that no work is evicted for GPUs that then do not help;
 * among those, {@link PreemptionChoice} keeps the newest cards for a pod that wants them and the least work lost.
 */
public final class Preemption {

    private static final Logger LOG = LoggerFactory.getLogger(Preemption.class);

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    private final Function<PodRequest, ClosedTier> closedTier;
    private final Clock clock;

    /**
     * @param closedTier the tier a high-priority reserve closes to a pod now ({@link ExtenderService#closedTier}),
     *                   so that preemption never frees cards the filter would then refuse the pod
     */
    public Preemption(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy,
                      Function<PodRequest, ClosedTier> closedTier, Clock clock) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
        this.closedTier = closedTier;
        this.clock = clock;
    }

    /** The nodes kept as candidates, with kube-scheduler's victims on each. */
    public ExtenderPreemptionResult answer(ExtenderPreemptionArgs args) {
        return new ExtenderPreemptionResult(decide(args));
    }

    Map<String, MetaVictims> decide(ExtenderPreemptionArgs args) {
        var proposals = new LinkedHashMap<String, List<Pod>>();
        var pdb = new LinkedHashMap<String, Long>();
        var metaProposals = new LinkedHashMap<String, MetaVictims>();
        if (args.nodeNameToVictims() != null) {
            args.nodeNameToVictims().forEach((node, victims) -> {
                proposals.put(node, victims == null || victims.pods() == null ? List.of() : victims.pods());
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
        var options = new ArrayList<PreemptionChoice.Option>();
        var victimsByNode = new LinkedHashMap<String, List<String>>();
        for (var node : pdb.keySet()) {
            var metaVictims = metaProposals.get(node);
            List<String> uids;
            if (metaVictims != null) {
                uids = metaVictims.pods() == null ? List.of() : metaVictims.pods().stream().map(MetaPod::uid).toList();
            } else {
                uids = proposals.get(node).stream().map(victim -> victim.getMetadata().getUid()).toList();
            }
            var tier = pod.needsGpus() ? tierAfter(pod, node, uids) : OptionalInt.of(-1);
            if (tier.isPresent()) {
                victimsByNode.put(node, uids);
                options.add(new PreemptionChoice.Option(node, tier.getAsInt(), workLost(node, uids, proposals.get(node), now)));
            }
        }
        var kept = new LinkedHashMap<String, MetaVictims>();
        for (var node : PreemptionChoice.keep(options, pod.needsGpus() && policy.preferenceOf(pod) == GpuPreference.NEWEST)) {
            kept.put(node, new MetaVictims(victimsByNode.get(node).stream().map(MetaPod::new).toList(), pdb.get(node)));
        }
        return kept;
    }

    /** GPU-seconds of work the victims lose, each since it last saved it. */
    private long workLost(String node, List<String> uids, List<Pod> proposed, Instant now) {
        var gpusByUid = new HashMap<String, Integer>();
        cluster.boundPods(node).forEach(bound -> gpusByUid.put(bound.uid(), bound.gpuCount()));
        var podsByUid = new HashMap<String, Pod>();
        if (proposed != null) {
            proposed.forEach(victim -> podsByUid.put(victim.getMetadata().getUid(), victim));
        }
        long lost = 0;
        for (var uid : uids) {
            var victim = podsByUid.containsKey(uid) ? podsByUid.get(uid) : cluster.podByUid(uid);
            if (victim == null) {
                continue;
            }
            var annotations = victim.getMetadata().getAnnotations() == null ? Map.<String, String>of() : victim.getMetadata().getAnnotations();
            var started = victim.getStatus() == null ? null : victim.getStatus().getStartTime();
            lost += PreemptionChoice.gpuSecondsLost(gpusByUid.getOrDefault(uid, 0), PreemptionChoice.lastSaved(annotations, started, now), now);
        }
        return lost;
    }

    /**
     * The tier of the weakest card the pod would get once these pods are gone (-1 when the node cannot be judged), or
     * empty when evicting them leaves no GPU set the pod can use.
     */
    private OptionalInt tierAfter(PodRequest pod, String nodeName, List<String> victimUids) {
        var facts = cluster.node(nodeName);
        if (facts == null) {
            // Without the node's inventory there is nothing to judge by; leave the decision to kube-scheduler.
            return OptionalInt.of(-1);
        }
        List<BoundPod> bound = cluster.boundPods(nodeName);
        var state = nodes.state(facts, bound);
        var holdings = DeviceHoldings.predict(state.gpus(), bound);
        long freed = 0;
        var victims = new HashSet<>(victimUids);
        for (var entry : holdings.entrySet()) {
            if (victims.contains(entry.getKey())) {
                freed |= entry.getValue();
            }
        }
        var after = new NodeState(state.name(), state.rack(), state.zone(), state.gpus(),
                (state.freeMask() | freed) & state.gpus().healthyMask());
        var assessment = policy.assess(pod, after, closedTier.apply(pod));
        return switch (assessment) {
            case PlacementPolicy.Misfit misfit -> {
                LOG.debug("preemption on {} refused for {}: evicting {} would leave {}", nodeName, pod.displayName(),
                        victimUids, misfit.rejection().reason());
                yield OptionalInt.empty();
            }
            case PlacementPolicy.Fit fit -> OptionalInt.of(fit.candidate().tierRank());
        };
    }
}
