package io.hetgpu.extender.model;

import java.util.List;

/**
 * What the cluster knows about a pod beyond the pod itself: where its job's other pods run, which of them still wait
 * for a node, and where its volumes' data lives. Empty when the extender runs without an API server.
 *
 * @param peers   the job's other pods that a node holds
 * @param volumes where the data of the pod's volumes lives
 * @param waiting the job's other pods that no node holds yet, in the order kube-scheduler will take them
 */
public record PlacementContext(List<PeerLocation> peers, List<DataLocality> volumes, List<WaitingPeer> waiting) {

    public static final PlacementContext EMPTY = new PlacementContext(List.of(), List.of());

    /** A pod whose job has no pod waiting besides it. */
    public PlacementContext(List<PeerLocation> peers, List<DataLocality> volumes) {
        this(peers, volumes, List.of());
    }

    public PlacementContext {
        peers = List.copyOf(peers);
        volumes = List.copyOf(volumes);
        waiting = List.copyOf(waiting);
    }

    /** Whether the pod has a job whose other pods can be near it or not. */
    public boolean hasJob() {
        if (!peers.isEmpty()) {
            return true;
        }
        // A loop, not a stream: asked by two scorers for every pod scored, mostly of an empty list.
        for (var peer : waiting) {
            if (peer.gpus() > 0) {
                return true;
            }
        }
        return false;
    }
}
