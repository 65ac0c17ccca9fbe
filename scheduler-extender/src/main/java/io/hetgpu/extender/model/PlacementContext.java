package io.hetgpu.extender.model;

import java.util.List;

/**
 * What the cluster knows about a pod beyond the pod itself: where its job's other pods run and where
 * its volumes' data lives. Empty when the extender runs without an API server.
 */
public record PlacementContext(List<PeerLocation> peers, List<DataLocality> volumes) {

    public static final PlacementContext EMPTY = new PlacementContext(List.of(), List.of());

    public PlacementContext {
        peers = List.copyOf(peers);
        volumes = List.copyOf(volumes);
    }
}
