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
import java.util.function.Function;

/**
 * The closeness of a node to a pod's job ({@link Proximity#toJob}), with the job's pods indexed once by node, rack and
 * zone for the thousands of nodes one request asks about: a node far from every peer costs three lookups, not a
 * comparison per peer, and the pods still waiting are counted once per number of spare GPUs. A planned job of 16
 * pods has up to 15 peers and 15 waiting pods for each of thousands of nodes.
 *
 * <p>The mean is taken from counts (peers on the node, in the rack, in the zone; waiting pods that fit), so two nodes
 * with the same counts get the very same value whatever order the peers came in: the packing groups compare these
 * values exactly.
 */
public final class JobCloseness {

    private static final Map<String, List<PeerLocation>> NONE = Map.of();

    private final int counted;
    private final Map<String, List<PeerLocation>> byNode;
    private final Map<String, List<PeerLocation>> byRack;
    private final Map<String, List<PeerLocation>> byZone;
    private final int[] gpusWaiting;
    /** How many waiting pods fit in a number of spare GPUs, by that number (-1: not worked out yet). */
    private int[] fittingBySpare = new int[0];

    private JobCloseness(PlacementContext context) {
        var peers = context.peers();
        byNode = index(peers, PeerLocation::node);
        byRack = index(peers, PeerLocation::rack);
        byZone = index(peers, PeerLocation::zone);
        // A waiting pod without GPUs fits anywhere and follows the others: it tells no node from another.
        gpusWaiting = context.waiting().stream().mapToInt(WaitingPeer::gpus).filter(gpus -> gpus > 0).toArray();
        counted = peers.size() + gpusWaiting.length;
    }

    /** The job's pods of {@code context}, ready to be weighed against any node. */
    public static JobCloseness of(PlacementContext context) {
        return new JobCloseness(context);
    }

    /** The mean closeness of {@code node} to the job's pods, with {@code spareGpus} left there for those still waiting. */
    public double of(NodeState node, int spareGpus) {
        if (counted == 0) {
            return 0;
        }
        int sameNode = 0;
        int sameRack = 0;
        int sameZone = 0;
        // Each peer once: those of the node's zone; those of its rack in another zone; those on it in neither.
        var zone = node.zone();
        var rack = node.rack();
        for (var peer : zone.isEmpty() ? List.<PeerLocation>of() : byZone.getOrDefault(zone, List.of())) {
            double closeness = Proximity.to(node, peer);
            sameNode += closeness == Proximity.SAME_NODE ? 1 : 0;
            sameRack += closeness == Proximity.SAME_RACK ? 1 : 0;
            sameZone += closeness == Proximity.SAME_ZONE ? 1 : 0;
        }
        if (!rack.isEmpty()) {
            for (var peer : byRack.getOrDefault(rack, List.of())) {
                if (zone.isEmpty() || !zone.equals(peer.zone())) {
                    double closeness = Proximity.to(node, peer);
                    sameNode += closeness == Proximity.SAME_NODE ? 1 : 0;
                    sameRack += closeness == Proximity.SAME_RACK ? 1 : 0;
                }
            }
        }
        for (var peer : byNode.getOrDefault(node.name(), List.of())) {
            if ((zone.isEmpty() || !zone.equals(peer.zone())) && (rack.isEmpty() || !rack.equals(peer.rack()))) {
                sameNode++;
            }
        }
        double sum = sameNode * Proximity.SAME_NODE + sameRack * Proximity.SAME_RACK + sameZone * Proximity.SAME_ZONE
                + fitting(spareGpus) * Proximity.SAME_NODE;
        return sum / counted;
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

    private static Map<String, List<PeerLocation>> index(List<PeerLocation> peers, Function<PeerLocation, String> key) {
        if (peers.isEmpty()) {
            return NONE;
        }
        var index = new HashMap<String, List<PeerLocation>>();
        for (var peer : peers) {
            var value = key.apply(peer);
            if (value != null && !value.isEmpty()) {
                index.computeIfAbsent(value, k -> new ArrayList<>()).add(peer);
            }
        }
        return index;
    }
}
