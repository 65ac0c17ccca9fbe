package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The contexts of the members of one job in one plan, read from the cluster view once: the job's pods on nodes are the
 * same for every member planned (each is waiting, so none is its own peer), and a member's data is read from its claims
 * alone, once for each set of claims. A view reads a whole context by listing and sorting every pod of the job, which
 * for each member of a job of thousands made a plan grow with the square of the job. The planner replaces the waiting
 * pods of a context with the members after it, so the first context's are never used.
 */
final class JobContexts implements Function<PodRequest, PlacementContext> {

    private final ClusterView cluster;
    /** The first member's context: its peers are every member's. */
    private PlacementContext first;
    private final Map<List<String>, PlacementContext> byClaims = new HashMap<>();

    JobContexts(ClusterView cluster) {
        this.cluster = cluster;
    }

    @Override
    public PlacementContext apply(PodRequest member) {
        if (first == null) {
            first = cluster.contextOf(member);
            byClaims.put(member.claimNames(), first);
            return first;
        }
        var known = byClaims.get(member.claimNames());
        if (known == null) {
            known = new PlacementContext(first.peers(), cluster.volumesOf(member), first.waiting());
            byClaims.put(member.claimNames(), known);
        }
        return known;
    }
}
