package io.hetgpu.extender.service;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.WireNode;
import java.util.Arrays;

/** Every request judged from scratch: the reference that {@link MemoizingCache} must answer exactly like. */
final class NoCache implements RequestCache {

    private final ClusterView cluster;
    private final PodRequestParser parser;
    private final NodeStateFactory nodes;
    private final PlacementPolicy policy;
    private volatile TopTierHeadroom last = TopTierHeadroom.NONE;

    NoCache(ClusterView cluster, PodRequestParser parser, NodeStateFactory nodes, PlacementPolicy policy) {
        this.cluster = cluster;
        this.parser = parser;
        this.nodes = nodes;
        this.policy = policy;
    }

    @Override
    public ResolvedNodes resolve(ExtenderArgs args) {
        return NodeResolution.resolve(args, cluster, new NodeResolution.States() {
            @Override
            public void begin(NodeSnapshot snapshot, int capacity) {
            }

            @Override
            public NodeState ofRequestNode(WireNode node, int index) {
                return nodes.state(withClusterSlices(node.facts(), cluster), cluster.boundPods(node.facts().name()));
            }

            @Override
            public NodeState ofClusterNode(NodeSnapshot snapshot, int position, int index) {
                return nodes.state(snapshot.facts(position), snapshot.boundPods(position));
            }

            @Override
            public Trace end(int kept) {
                return Trace.NONE;
            }
        });
    }

    @Override
    public ResolvedNodes resolveFiltered(ExtenderArgs args) {
        return resolve(args);
    }

    @Override
    public void filtered(ResolvedNodes nodes, int[] indexes, int count) {
    }

    @Override
    public PodRequest parse(Pod pod) throws InvalidPodRequestException {
        return parser.parse(pod);
    }

    @Override
    public PlacementPolicy.Assessment[] assess(PodRequest pod, ClosedTier closed, ResolvedNodes resolved) {
        return policy.assessAll(pod, Arrays.asList(resolved.states()), closed).toArray(PlacementPolicy.Assessment[]::new);
    }

    @Override
    public TopTierHeadroom headroom(ResolvedNodes resolved) {
        last = cluster.knowsNodes() ? clusterHeadroom() : TopTierHeadroom.of(Arrays.asList(resolved.states()));
        return last;
    }

    @Override
    public TopTierHeadroom clusterHeadroom() {
        last = TopTierHeadroom.of(NodeResolution.allStates(cluster.nodes(), nodes));
        return last;
    }

    @Override
    public TopTierHeadroom lastHeadroom() {
        return last;
    }

    /**
     * A node as a request gave it, with the GPUs its ResourceSlices publish as the cluster view read them: a Node object
     * does not carry them (kube-scheduler configured without {@code nodeCacheCapable} sends whole Nodes).
     */
    static io.hetgpu.extender.model.NodeFacts withClusterSlices(io.hetgpu.extender.model.NodeFacts facts, ClusterView cluster) {
        var known = cluster.node(facts.name());
        return known == null || !known.slices().publishesGpus() ? facts : facts.withSlices(known.slices());
    }
}
