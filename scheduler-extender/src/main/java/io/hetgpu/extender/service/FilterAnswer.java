package io.hetgpu.extender.service;

import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.Verdict;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.NodeReasons;
import io.hetgpu.extender.wire.WireNode;
import io.hetgpu.gpu.Quote;
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
    /** The indexes of the resolved nodes that fit, in order: what the answer keeps, in whichever form it keeps them. */
    private final int[] fitting;
    private int fittingCount;
    private final Refusals failed;
    private final Refusals unresolvable;
    /** The pod was refused as a whole: the answer names one node (see {@link #refusedEverywhere}). */
    private boolean podRefused;

    FilterAnswer(ResolvedNodes nodes) {
        this.nodes = nodes;
        this.fitting = new int[nodes.size()];
        this.failed = new Refusals(nodes);
        this.unresolvable = new Refusals(nodes);
    }

    /** The policy's assessment of each resolved node, in their order. */
    void judged(PlacementPolicy.Assessment[] assessments) {
        for (int i = 0; i < assessments.length; i++) {
            switch (assessments[i]) {
                case PlacementPolicy.Fit fit -> fits(i);
                case PlacementPolicy.Misfit misfit -> (misfit.rejection().unresolvable() ? unresolvable : failed)
                        .add(misfit.node(), misfit.rejection().reason(), nodes.indexes() == null ? -1 : nodes.indexes()[i]);
            }
        }
    }

    /**
     * The pod itself cannot be placed (its request cannot be read): the reason once, on the first node asked about,
     * in {@code FailedAndUnresolvableNodes}, and no other node in any list. kube-scheduler keeps only the nodes an
     * answer returns, so the others are refused too; it gives them no status, which since 1.31 reads as
     * UnschedulableAndUnresolvable (no preemption tried there; before 1.31 it may try, and the preempt verb keeps no
     * node for such a pod). Its FailedScheduling event then says "0/N nodes are available: 1 pod … cannot be
     * placed: …", the pod is Unschedulable and waits for a change to it (the user's fix) or to the cluster. Not an
     * {@code Error}: that makes kube-scheduler retry the pod with backoff forever as a scheduler error, and skip an
     * {@code ignorable} extender altogether, placing the pod as if hetgpu did not exist. Not once per node: a 250 KB
     * annotation quoted once per node made a 5,000-node answer over a gigabyte.
     */
    void refusedEverywhere(String reason) {
        podRefused = true;
        String first = nodes.states().length > 0 ? nodes.states()[0].name()
                : !nodes.unknown().isEmpty() ? nodes.unknown().getFirst() : "";
        unresolvable.add(first, Quote.cut(reason, Verdict.MAX_REASON_CHARS));
    }

    /**
     * The pod has a seat in its job's plan: only that node is kept. The others are named in no list, which
     * kube-scheduler reads as unresolvable (no preemption there); the reason goes once, under the first other node, for
     * the log of a pod whose seat's node is not asked about.
     */
    void steered(String node, String elsewhere) {
        for (int i = 0; i < nodes.states().length; i++) {
            if (nodes.states()[i].name().equals(node)) {
                fits(i);
                return;
            }
        }
        refusedEverywhere(elsewhere);
    }

    /** The resolved node at {@code i} fits. */
    private void fits(int i) {
        fitting[fittingCount++] = i;
    }

    /** Tells the cache which nodes this answer keeps, for the prioritize call that follows it. */
    void keptInto(RequestCache cache) {
        cache.filtered(nodes, fitting, fittingCount);
    }

    /** A Nodes request's answer: the Node objects that fit, echoed; null for a NodeNames request. */
    private List<WireNode> keptNodes() {
        if (nodes.byName()) {
            return null;
        }
        var kept = new ArrayList<WireNode>(fittingCount);
        for (int k = 0; k < fittingCount; k++) {
            kept.add(nodes.wire().get(fitting[k]));
        }
        return kept;
    }

    /** A NodeNames request's answer: the names that fit, as the bytes they came as where they came so; null for Nodes. */
    private List<String> fittingNames() {
        if (!nodes.byName()) {
            return null;
        }
        if (nodes.asked() != null) {
            var asked = new int[fittingCount];
            for (int k = 0; k < fittingCount; k++) {
                asked[k] = nodes.indexes()[fitting[k]];
            }
            return nodes.asked().subset(asked, fittingCount);
        }
        var names = new ArrayList<String>(fittingCount);
        for (int k = 0; k < fittingCount; k++) {
            names.add(nodes.states()[fitting[k]].name());
        }
        return names;
    }

    FilterResult result() {
        if (podRefused) {
            return new FilterResult(keptNodes(), fittingNames(), failed.map(), unresolvable.map(), "");
        }
        for (var name : nodes.unknown()) {
            failed.add(name, ExtenderService.UNKNOWN_NODE);
        }
        if (nodes.unnamed()) {
            unresolvable.add("", ExtenderService.UNNAMED_NODE);
        }
        return new FilterResult(keptNodes(), fittingNames(), failed.map(), unresolvable.map(), "");
    }

    /**
     * One of the reason maps, each node once (the resolved nodes are distinct). A NodeNames request's
     * thousands of entries go into two arrays.
     */
    private static final class Refusals {
        private final NodeReasons.Builder byPosition;
        private final LinkedHashMap<String, String> byName;

        Refusals(ResolvedNodes nodes) {
            byPosition = nodes.byName() ? NodeReasons.builder(nodes.size(), nodes.asked()) : null;
            byName = nodes.byName() ? null : new LinkedHashMap<>();
        }

        /** @param reason cut and printable already ({@link Verdict.Rejected} cuts the policy's) */
        void add(String node, String reason) {
            add(node, reason, -1);
        }

        /** @param requestIndex the node's index among the request's names as bytes, or -1 */
        void add(String node, String reason, int requestIndex) {
            if (byName != null) {
                byName.put(node, reason);
            } else {
                byPosition.put(node, reason, requestIndex);
            }
        }

        Map<String, String> map() {
            return byName != null ? byName : byPosition.build();
        }
    }
}
