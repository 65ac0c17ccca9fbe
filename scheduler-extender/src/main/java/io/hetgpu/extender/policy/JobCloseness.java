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
    /** The racks that hold peers, with their names' hashes and how many peers each holds. */
    private final Places racks;
    /** The zones that hold peers, likewise. */
    private final Places zones;
    /** Peers in zone z and rack r, at {@code z * racks.size() + r}. */
    private final int[] inZoneAndRack;
    private final int[] gpusWaiting;
    /** How many waiting pods fit in a number of spare GPUs, by that number (-1: not worked out yet). */
    private int[] fittingBySpare = new int[0];

    /**
     * The few places (racks or zones) a job's peers are in, looked up by a scan of their hashes: a job of 16 pods is in a
     * handful of racks, and a scan of a few ints per node is cheaper than the hash map lookups it replaced, three or four
     * for each of thousands of nodes for each member of a planned job.
     */
    private static final class Places {
        /** Above this many places a scan costs more than a map's lookup: a job of thousands spans tens of racks. */
        private static final int SCANNED = 8;

        private final List<String> names = new ArrayList<>();
        private int[] hashes = new int[0];
        private int[] peers = new int[0];
        /** Each place's index by name, once there are more than {@link #SCANNED}. */
        private Map<String, Integer> indices;

        /** One more peer in the place; its index. */
        int count(String name) {
            int at = indexOf(name);
            if (at < 0) {
                at = names.size();
                names.add(name);
                if (at == hashes.length) {
                    hashes = Arrays.copyOf(hashes, Math.max(4, at * 2));
                    peers = Arrays.copyOf(peers, hashes.length);
                }
                hashes[at] = name.hashCode();
                if (indices != null) {
                    indices.put(name, at);
                } else if (names.size() > SCANNED) {
                    indices = new HashMap<>();
                    for (int i = 0; i < names.size(); i++) {
                        indices.put(names.get(i), i);
                    }
                }
            }
            peers[at]++;
            return at;
        }

        /** The place's index, or -1 when no peer is there. */
        int indexOf(String name) {
            return indexOf(name, name.hashCode());
        }

        /** The same, given the name's hash: the name is read only where a peer's place hashes alike. */
        int indexOf(String name, int hash) {
            if (indices != null) {
                return indices.getOrDefault(name, -1);
            }
            for (int i = 0; i < names.size(); i++) {
                if (hashes[i] == hash && names.get(i).equals(name)) {
                    return i;
                }
            }
            return -1;
        }

        int size() {
            return names.size();
        }
    }

    private JobCloseness(PlacementContext context) {
        var peers = context.peers();
        byNode = new HashMap<>();
        racks = new Places();
        zones = new Places();
        // Empty labels name no rack or zone: a node without one shares it with nobody. One pass: a planned job of
        // thousands builds this for each member, over every member planned before it.
        var zoneOfPeer = new int[peers.size()];
        var rackOfPeer = new int[peers.size()];
        for (int i = 0; i < peers.size(); i++) {
            var peer = peers.get(i);
            if (peer.node() != null) {
                byNode.computeIfAbsent(peer.node(), node -> new ArrayList<>()).add(peer);
            }
            rackOfPeer[i] = labelled(peer.rack()) ? racks.count(peer.rack()) : -1;
            zoneOfPeer[i] = labelled(peer.zone()) ? zones.count(peer.zone()) : -1;
        }
        inZoneAndRack = new int[zones.size() * racks.size()];
        for (int i = 0; i < peers.size(); i++) {
            if (rackOfPeer[i] >= 0 && zoneOfPeer[i] >= 0) {
                inZoneAndRack[zoneOfPeer[i] * racks.size() + rackOfPeer[i]]++;
            }
        }
        // Sorted, for a binary search where a job's pods are on many nodes; a scan of a few where on few.
        peerNodeHashes = byNode.keySet().stream().mapToInt(String::hashCode).sorted().toArray();
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
        return counted == 0 ? 0 : of(byNode.getOrDefault(node.name(), List.of()), node.rack(), node.rack().hashCode(), node.zone(),
                node.zone().hashCode(), spareGpus);
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
        return of(own, candidate.rack(), candidate.rackHash(), candidate.zone(), candidate.zoneHash(), candidate.spareGpus());
    }

    private boolean mayHoldPeers(int nameHash) {
        if (peerNodeHashes.length > Places.SCANNED) {
            return Arrays.binarySearch(peerNodeHashes, nameHash) >= 0;
        }
        for (int hash : peerNodeHashes) {
            if (hash == nameHash) {
                return true;
            }
        }
        return false;
    }

    /** @param rackHash {@code nodeRack}'s hash, and {@code zoneHash} {@code nodeZone}'s: "" hashes to 0 */
    private double of(List<PeerLocation> own, String nodeRack, int rackHash, String nodeZone, int zoneHash, int spareGpus) {
        var rack = rackHash == 0 && !labelled(nodeRack) ? null : nodeRack;
        var zone = zoneHash == 0 && !labelled(nodeZone) ? null : nodeZone;
        int r = rack == null ? -1 : racks.indexOf(rack, rackHash);
        int z = zone == null ? -1 : zones.indexOf(zone, zoneHash);
        int sameNode = own.size();
        int sameRack = r < 0 ? 0 : racks.peers[r];
        int sameZone = z < 0 ? 0 : zones.peers[z] - (r < 0 ? 0 : inZoneAndRack[z * racks.size() + r]);
        // The loop over the node's own peers is skipped when it has none, as nearly every node: an iterator over an
        // empty list was the plan's largest allocation.
        for (int i = 0; i < sameNode; i++) {
            var peer = own.get(i);
            boolean inRack = rack != null && rack.equals(peer.rack());
            sameRack -= inRack ? 1 : 0;
            sameZone -= zone != null && zone.equals(peer.zone()) && !inRack ? 1 : 0;
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
