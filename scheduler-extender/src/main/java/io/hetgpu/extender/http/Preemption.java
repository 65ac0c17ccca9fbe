package io.hetgpu.extender.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DeviceHoldings;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.PlacementPolicy;
import java.io.IOException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The preempt verb (kube-scheduler's ProcessPreemption). kube-scheduler proposes, per node, the pods it
 * would evict; the extender keeps a node only if evicting them frees a GPU set the preemptor can use
 * (the right cards, an NVLink set when asked), so that no work is evicted for GPUs that then do not help.
 */
public final class Preemption {

    private static final Logger LOG = LoggerFactory.getLogger(Preemption.class);

    /** Go's decoder matches keys case-insensitively; so does this mapper. */
    private final ObjectMapper mapper = JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();
    private final ExtenderService service;

    public Preemption(ExtenderService service) {
        this.service = service;
    }

    // The wire types of k8s.io/kube-scheduler/extender/v1, with Go's field names.
    public record MetaPod(@JsonProperty("UID") String uid) {
    }

    public record MetaVictims(@JsonProperty("Pods") List<MetaPod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {
    }

    public record Victims(@JsonProperty("Pods") List<Pod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {
    }

    public record PreemptionArgs(@JsonProperty("Pod") Pod pod,
                                 @JsonProperty("NodeNameToVictims") Map<String, Victims> nodeNameToVictims,
                                 @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {
    }

    public record PreemptionResult(@JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {
    }

    public byte[] answer(byte[] body) throws WireFormatException {
        PreemptionArgs args;
        try {
            args = mapper.readValue(body, PreemptionArgs.class);
        } catch (JsonProcessingException e) {
            throw new WireFormatException("request body is not valid ExtenderPreemptionArgs JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new WireFormatException("request body could not be read: " + e.getMessage());
        }
        if (args == null || args.pod() == null) {
            throw new WireFormatException(ExtenderService.NULL_POD);
        }
        try {
            return mapper.writeValueAsBytes(new PreemptionResult(decide(args)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("records of strings and numbers always serialise", e);
        }
    }

    Map<String, MetaVictims> decide(PreemptionArgs args) {
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
            pod = service.parser().parse(args.pod());
        } catch (InvalidPodRequestException e) {
            return Map.of();
        }
        var kept = new LinkedHashMap<String, MetaVictims>();
        for (var node : pdb.keySet()) {
            var metaVictims = metaProposals.get(node);
            List<String> uids;
            if (metaVictims != null) {
                uids = metaVictims.pods() == null ? List.of() : metaVictims.pods().stream().map(MetaPod::uid).toList();
            } else {
                uids = proposals.get(node).stream().map(victim -> victim.getMetadata().getUid()).toList();
            }
            if (!pod.needsGpus() || helps(pod, node, uids)) {
                kept.put(node, new MetaVictims(uids.stream().map(MetaPod::new).toList(), pdb.get(node)));
            }
        }
        return kept;
    }

    /** Whether evicting these pods leaves the node a GPU set the pod can use. */
    private boolean helps(PodRequest pod, String nodeName, List<String> victimUids) {
        var cluster = service.cluster();
        var facts = cluster.node(nodeName);
        if (facts == null) {
            // Without the node's inventory there is nothing to judge by; leave the decision to kube-scheduler.
            return true;
        }
        List<BoundPod> bound = cluster.boundPods(nodeName);
        var state = service.nodeStates().state(facts, bound);
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
        var assessment = service.policy().assess(pod, after, service.closedTier(pod));
        if (assessment instanceof PlacementPolicy.Misfit misfit) {
            LOG.debug("preemption on {} refused for {}: evicting {} would leave {}", nodeName, pod.displayName(),
                    victimUids, misfit.rejection().reason());
            return false;
        }
        return true;
    }
}
