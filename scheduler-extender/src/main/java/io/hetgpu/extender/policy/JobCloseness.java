package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.WaitingPeer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The mean closeness of a node to a pod's job's other pods, 0 when there are none: what the job score and the preempt
 * verb reward, on {@link Proximity}'s node > rack > zone scale. A pod placed counts by where it runs (on the node, else
 * in its rack, else in its zone); a pod still waiting counts as on the node when the spare GPUs left there would hold
 * it too (each taking its share, in the order they wait), else as elsewhere. So the first worker of a gang goes where
 * the second can follow, not to a node where it would be alone.
 *
 * <p>The job's pods are counted once by node, rack and zone for the thousands of nodes one request asks about: a node
 * costs a few lookups, not a comparison per peer, and the pods still waiting are counted once per number of spare
 * GPUs. A planned job of 16 pods has up to 15 peers and 15 waiting pods for each of thousands of nodes. The mean is
 * taken from counts, so two nodes with the same counts get the very same value whatever order the peers came in: the
 * packing groups compare these values exactly.
 */
public final class JobCloseness {

    private final int counted;
    /** The peers on each node, by node name (a node's own peers are few, and its count is corrected by them). */
    private final Map<String, List<PeerLocation>> byNode;
    /** The hashes of {@link #byNode}'s names: a node whose name hashes to none of them holds no peer. */
    private final int[] peerNodeHashes;
    private final Map<String, Integer> inRack;
    private final Map<String, Integer> inZone;
    /** Per zone, the peers of each rack of it. */
    private final Map<String, Map<String, Integer>> inZoneAndRack;
    private final int[] gpusWaiting;
    /** How many waiting pods fit in a number of spare GPUs, by that number (-1: not worked out yet). */
    private int[] fittingBySpare = new int[0];

    private JobCloseness(PlacementContext context) {
        var peers = context.peers();
        byNode = new HashMap<>();
        inRack = new HashMap<>();
        inZone = new HashMap<>();
        inZoneAndRack = new HashMap<>();
        // Empty labels name no rack or zone: a node without one shares it with nobody.
        for (var peer : peers) {
            if (peer.node() != null) {
                byNode.computeIfAbsent(peer.node(), node -> new ArrayList<>()).add(peer);
            }
            if (labelled(peer.rack())) {
                inRack.merge(peer.rack(), 1, Integer::sum);
            }
            if (labelled(peer.zone())) {
                inZone.merge(peer.zone(), 1, Integer::sum);
                if (labelled(peer.rack())) {
                    inZoneAndRack.computeIfAbsent(peer.zone(), zone -> new HashMap<>()).merge(peer.rack(), 1, Integer::sum);
                }
            }
        }
        peerNodeHashes = byNode.keySet().stream().mapToInt(String::hashCode).toArray();
        // A waiting pod without GPUs fits anywhere and follows the others: it tells no node from another.
        gpusWaiting = context.waiting().stream().mapToInt(WaitingPeer::gpus).filter(gpus -> gpus > 0).toArray();
        counted = peers.size() + gpusWaiting.length;
    }

    /** The job's pods of {@code context}, ready to be weighed against any node. */
    public static JobCloseness of(PlacementContext context) {
        return new JobCloseness(context);
    }

    /**
     * The mean closeness of {@code node} to the job's pods, with {@code spareGpus} left there for those still waiting.
     * Each peer counts by the closest it is ({@link Proximity}'s scale): on the node; else in its rack; else in its zone.
     * Counted without a look at each peer: those in the rack but not on the node are the rack's less the node's own,
     * those in the zone but neither are the zone's less the zone's of this rack, less the node's own in another rack.
     */
    public double of(NodeState node, int spareGpus) {
        return counted == 0 ? 0 : of(byNode.getOrDefault(node.name(), List.of()), node.rack(), node.zone(), spareGpus);
    }

    /**
     * The same for a candidate on its node as it was assessed, from the candidate's own copy of the node's place: the
     * node's name is read only when a peer may be on it (a plan asks this of thousands of candidates for each member).
     */
    public double of(Candidate candidate) {
        if (counted == 0) {
            return 0;
        }
        var own = mayHoldPeers(candidate.nameHash()) ? byNode.getOrDefault(candidate.name(), List.of()) : List.<PeerLocation>of();
        return of(own, candidate.rack(), candidate.zone(), candidate.spareGpus());
    }

    private boolean mayHoldPeers(int nameHash) {
        for (int hash : peerNodeHashes) {
            if (hash == nameHash) {
                return true;
            }
        }
        return false;
    }

    private double of(List<PeerLocation> own, String nodeRack, String nodeZone, int spareGpus) {
        var rack = labelled(nodeRack) ? nodeRack : null;
        var zone = labelled(nodeZone) ? nodeZone : null;
        int sameNode = own.size();
        int sameRack = 0;
        int sameZone = 0;
        // The loops over the node's own peers are skipped when it has none, as nearly every node: an iterator over an
        // empty list was the plan's largest allocation.
        if (rack != null) {
            sameRack = inRack.getOrDefault(rack, 0);
            for (int i = 0; i < sameNode; i++) {
                sameRack -= rack.equals(own.get(i).rack()) ? 1 : 0;
            }
        }
        if (zone != null) {
            sameZone = inZone.getOrDefault(zone, 0);
            if (sameZone > 0) {
                if (rack != null) {
                    sameZone -= inZoneAndRack.getOrDefault(zone, Map.of()).getOrDefault(rack, 0);
                }
                for (int i = 0; i < sameNode; i++) {
                    var peer = own.get(i);
                    sameZone -= zone.equals(peer.zone()) && (rack == null || !rack.equals(peer.rack())) ? 1 : 0;
                }
            }
        }
        double sum = sameNode * Proximity.SAME_NODE + sameRack * Proximity.SAME_RACK + sameZone * Proximity.SAME_ZONE
                + fitting(spareGpus) * Proximity.SAME_NODE;
        return sum / counted;
    }

    private static boolean labelled(String value) {
        return value != null && !value.isEmpty();
    }

    /** The waiting pods counted as on the node: each that fits in what the ones before it left, in the order they wait. */
    private int fitting(int spareGpus) {
        if (gpusWaiting.length == 0 || spareGpus <= 0) {
            return 0;
        }
        if (spareGpus < fittingBySpare.length && fittingBySpare[spareGpus] >= 0) {
            return fittingBySpare[spareGpus];
        }
        int spare = spareGpus;
        int fit = 0;
        for (int gpus : gpusWaiting) {
            if (gpus <= spare) {
                spare -= gpus;
                fit++;
            }
        }
        if (spareGpus < 64) {
            if (spareGpus >= fittingBySpare.length) {
                int old = fittingBySpare.length;
                fittingBySpare = Arrays.copyOf(fittingBySpare, spareGpus + 1);
                Arrays.fill(fittingBySpare, old, fittingBySpare.length, -1);
            }
            fittingBySpare[spareGpus] = fit;
        }
        return fit;
    }
}
