package io.hetgpu.extender.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The cluster's PodDisruptionBudgets as the eviction floor weighs them: which of one node's pods preemption could evict
 * without breaking a budget, counted as kube-scheduler's preemption counts violations ({@code filterPodsWithPDBViolation}):
 * the node's candidate victims most important first (higher priority, then bound earlier), each one taking one of the
 * allowed disruptions of every budget that selects it unless the budget already lists it as disrupted; a pod that takes
 * one more than a budget allows breaks it. Each node is counted from the budgets' full allowance, as kube-scheduler
 * judges each candidate node apart.
 *
 * <p>Budgets are written by a namespace's own users, so their cost is bounded here, not by what they write: a namespace
 * with more than {@link #MAX_BUDGETS_PER_NAMESPACE} budgets, or selectors of more than {@link #MAX_TERMS_PER_NAMESPACE}
 * terms in all, has every pod counted as guarded. That only keeps the floor from counting those pods' GPUs as reachable
 * (kube-scheduler may still evict them, as always); it never lets one namespace's budgets touch another's pods.
 */
public final class DisruptionBudgets {

    public static final int MAX_BUDGETS_PER_NAMESPACE = 32;
    public static final int MAX_TERMS_PER_NAMESPACE = 256;

    /**
     * One budget.
     *
     * @param namespace          its namespace: it selects only pods there
     * @param selector           {@code spec.selector}
     * @param disruptionsAllowed {@code status.disruptionsAllowed}
     * @param disruptedPods      the names in {@code status.disruptedPods}: evictions already under way, which cost it nothing more
     */
    public record Budget(String namespace, LabelSelection selector, int disruptionsAllowed, Set<String> disruptedPods) {
        public Budget {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(selector, "selector");
            disruptedPods = Set.copyOf(disruptedPods);
        }

        int terms() {
            return selector.matchLabels().size() + selector.expressions().size();
        }
    }

    /** What a budget reads of a running pod: where it runs in the API, its name and labels. */
    public record PodLabels(String namespace, String name, Map<String, String> labels) {
        public PodLabels {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(name, "name");
            labels = Map.copyOf(labels);
        }
    }

    /** No budgets: every pod may be evicted. */
    public static final DisruptionBudgets NONE = new DisruptionBudgets(Map.of(), Set.of(), false);

    /** Budgets not read yet: every pod counts as guarded, so the floor counts only the GPUs free now. */
    public static final DisruptionBudgets UNKNOWN = new DisruptionBudgets(Map.of(), Set.of(), true);

    /** namespace -> its budgets, with their index into a node's allowance array */
    private final Map<String, List<Indexed>> byNamespace;
    private final Set<String> crowded;
    private final boolean guardsAll;
    private final int[] allowed;

    private record Indexed(int index, Budget budget) {
    }

    private DisruptionBudgets(Map<String, List<Indexed>> byNamespace, Set<String> crowded, boolean guardsAll) {
        this.byNamespace = byNamespace;
        this.crowded = crowded;
        this.guardsAll = guardsAll;
        this.allowed = new int[byNamespace.values().stream().mapToInt(List::size).sum()];
        byNamespace.values().forEach(list -> list.forEach(one -> allowed[one.index()] = one.budget().disruptionsAllowed()));
    }

    public static DisruptionBudgets of(Collection<Budget> budgets) {
        var grouped = new HashMap<String, List<Budget>>();
        for (var budget : budgets) {
            grouped.computeIfAbsent(budget.namespace(), namespace -> new ArrayList<>()).add(budget);
        }
        var byNamespace = new HashMap<String, List<Indexed>>();
        var crowded = new HashSet<String>();
        int index = 0;
        for (var namespace : grouped.entrySet()) {
            var list = namespace.getValue();
            if (list.size() > MAX_BUDGETS_PER_NAMESPACE || list.stream().mapToInt(Budget::terms).sum() > MAX_TERMS_PER_NAMESPACE) {
                crowded.add(namespace.getKey());
                continue;
            }
            var indexed = new ArrayList<Indexed>(list.size());
            for (var budget : list) {
                indexed.add(new Indexed(index++, budget));
            }
            byNamespace.put(namespace.getKey(), List.copyOf(indexed));
        }
        return byNamespace.isEmpty() && crowded.isEmpty() ? NONE : new DisruptionBudgets(Map.copyOf(byNamespace), Set.copyOf(crowded), false);
    }

    /**
     * The UIDs of the pods among {@code bound} (the pods bound to one node) that preemption for a pod of {@code priority}
     * could evict without breaking a budget: those below that priority that hold their GPUs there. A pod that has let
     * them go is leaving already, and a bind in flight runs nowhere yet: neither is a victim. The eviction floor (what
     * preemption could free) and the victims named on a candidate proposed without any both ask this.
     */
    public Set<String> evictableBelow(List<BoundPod> bound, int priority, Function<String, PodLabels> pods) {
        var below = new ArrayList<BoundPod>(bound.size());
        for (var pod : bound) {
            if (pod.priority() < priority && !pod.binding() && !pod.released()) {
                below.add(pod);
            }
        }
        return evictable(below, pods);
    }

    /**
     * The UIDs among {@code candidates} (one node's pods that preemption may consider) that it could evict without
     * breaking a budget. {@code pods} finds a pod's labels by UID; a pod it does not know counts as guarded.
     */
    public Set<String> evictable(List<BoundPod> candidates, Function<String, PodLabels> pods) {
        if (candidates.isEmpty() || guardsAll) {
            return Set.of();
        }
        if (byNamespace.isEmpty() && crowded.isEmpty()) {
            var every = new HashSet<String>(candidates.size() * 2);
            candidates.forEach(pod -> every.add(pod.uid()));
            return every;
        }
        var ordered = new ArrayList<>(candidates);
        ordered.sort(Comparator.comparingInt(BoundPod::priority).reversed().thenComparing(BoundPod::boundAt).thenComparing(BoundPod::uid));
        int[] left = null;
        var evictable = new HashSet<String>(ordered.size() * 2);
        for (var pod : ordered) {
            var labels = pods.apply(pod.uid());
            if (labels == null || crowded.contains(labels.namespace())) {
                continue;
            }
            if (labels.labels().isEmpty()) {
                // kube-scheduler checks no budget for a pod without labels.
                evictable.add(pod.uid());
                continue;
            }
            boolean breaks = false;
            for (var one : byNamespace.getOrDefault(labels.namespace(), List.of())) {
                var budget = one.budget();
                if (!budget.selector().matches(labels.labels()) || budget.disruptedPods().contains(labels.name())) {
                    continue;
                }
                if (left == null) {
                    left = allowed.clone();
                }
                if (--left[one.index()] < 0) {
                    breaks = true;
                }
            }
            if (!breaks) {
                evictable.add(pod.uid());
            }
        }
        return evictable;
    }
}
