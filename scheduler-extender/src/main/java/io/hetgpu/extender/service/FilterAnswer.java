package io.hetgpu.extender.service;

import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.NodeReasons;
import io.hetgpu.extender.wire.WireNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's three filter lists as they fill, in request order: the nodes that fit (names, or the
 * request's own Node objects echoed back), those that failed, and those no preemption can fix.
 */
final class FilterAnswer {

    private final ResolvedNodes nodes;
    private final List<String> fitting;
    private final List<WireNode> kept;
    private final Refusals failed;
    private final Refusals unresolvable;

    FilterAnswer(ResolvedNodes nodes) {
        this.nodes = nodes;
        this.fitting = nodes.byName() ? new ArrayList<>(nodes.size()) : null;
        this.kept = nodes.byName() ? null : new ArrayList<>(nodes.size());
        this.failed = new Refusals(nodes);
        this.unresolvable = new Refusals(nodes);
    }

    /** The policy's assessment of each resolved node, in their order. */
    void judged(PlacementPolicy.Assessment[] assessments) {
        for (int i = 0; i < assessments.length; i++) {
            switch (assessments[i]) {
                case PlacementPolicy.Fit fit -> {
                    if (kept != null) {
                        kept.add(nodes.wire().get(i));
                    } else {
                        fitting.add(fit.candidate().name());
                    }
                }
                case PlacementPolicy.Misfit misfit -> (misfit.rejection().unresolvable() ? unresolvable : failed)
                        .add(misfit.node(), misfit.rejection().reason());
            }
        }
    }

    /** Every resolved node refused for one reason no preemption fixes (the pod itself cannot be placed). */
    void refusedEverywhere(String reason) {
        for (var state : nodes.states()) {
            unresolvable.add(state.name(), reason);
        }
    }

    FilterResult result() {
        for (var name : nodes.unknown()) {
            failed.add(name, ExtenderService.UNKNOWN_NODE);
        }
        if (nodes.unnamed()) {
            unresolvable.add("", ExtenderService.UNNAMED_NODE);
        }
        return new FilterResult(kept, fitting, failed.map(), unresolvable.map(), "");
    }

    /**
     * One of the reason maps, each node once (the resolved nodes are distinct). A NodeNames request's
     * thousands of entries go into two arrays.
     */
    private static final class Refusals {
        private final NodeReasons.Builder byPosition;
        private final LinkedHashMap<String, String> byName;

        Refusals(ResolvedNodes nodes) {
            byPosition = nodes.byName() ? NodeReasons.builder(nodes.size()) : null;
            byName = nodes.byName() ? null : new LinkedHashMap<>();
        }

        void add(String node, String reason) {
            if (byName != null) {
                byName.put(node, reason);
            } else {
                byPosition.put(node, reason);
            }
        }

        Map<String, String> map() {
            return byName != null ? byName : byPosition.build();
        }
    }
}
