package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.function.Supplier;

/** A synced informer-backed view reduced to its node table: whatever snapshot the supplier gives, no peers, no pods. */
public record SnapshotClusterView(Supplier<NodeSnapshot> snapshots) implements ClusterView {

    @Override
    public boolean synced() {
        return true;
    }

    @Override
    public boolean knowsNodes() {
        return true;
    }

    @Override
    public NodeSnapshot nodes() {
        return snapshots.get();
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
