package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.Optional;

/**
 * An informer-backed view as it is before its first lists have arrived, for tests of what the verbs do meanwhile:
 * not synced until {@link #finishListing()}, stopped for good once {@link #stop(String)} says why.
 */
public final class ListingClusterView implements ClusterView {

    private final NodeSnapshot nodes;
    private volatile boolean synced;
    private volatile String stoppedBecause = "";

    public ListingClusterView(NodeSnapshot nodes) {
        this.nodes = nodes;
    }

    public void finishListing() {
        synced = true;
    }

    public void stop(String because) {
        stoppedBecause = because;
    }

    @Override
    public boolean synced() {
        return synced;
    }

    @Override
    public Optional<String> stopped() {
        return stoppedBecause.isEmpty() ? Optional.empty() : Optional.of(stoppedBecause);
    }

    @Override
    public boolean knowsNodes() {
        return true;
    }

    @Override
    public NodeSnapshot nodes() {
        return nodes;
    }

    @Override
    public PlacementContext contextOf(PodRequest pod) {
        return PlacementContext.EMPTY;
    }

    @Override
    public Pod podByUid(String uid) {
        return null;
    }
}
