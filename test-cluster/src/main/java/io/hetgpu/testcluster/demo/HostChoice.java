package io.hetgpu.testcluster.demo;

import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How kube-scheduler chose a pod's node among several: per node its own plugins' score
 * (NodeResourcesFit LeastAllocated + BalancedAllocation, 0..200) and the extender's 0..10 score, which
 * it adds multiplied by the extender's weight and by 10. Tells why a pod ended on another node than
 * the one the extender's explanation calls best.
 *
 * @param node     where the pod went
 * @param kube     kube-scheduler's own score per feasible node
 * @param extender the extender's 0..10 score per feasible node
 * @param weight   the extender's weight in the scheduler configuration
 */
record HostChoice(String node, Map<String, Long> kube, Map<String, Long> extender, long weight) {

    HostChoice {
        kube = new TreeMap<>(kube);
        extender = new TreeMap<>(extender);
    }

    /**
     * From the decision's totals and kube-scheduler's own scores: the extender's share of each total
     * is what is left, divided by weight × 10.
     */
    static HostChoice of(String node, Map<String, Long> totals, Map<String, Long> kube, long weight) {
        var extender = new TreeMap<String, Long>();
        totals.forEach((name, total) -> extender.put(name, (total - kube.get(name)) / (weight * ExtenderSettings.SCORE_SCALE)));
        return new HostChoice(node, kube, extender, weight);
    }

    long total(String name) {
        return kube.get(name) + extender.get(name) * weight * ExtenderSettings.SCORE_SCALE;
    }

    /** The node the extender scored highest; among equals the first by name, the order it was asked in and names them. */
    String extenderBest() {
        String best = null;
        for (var entry : extender.entrySet()) {
            if (best == null || entry.getValue() > extender.get(best)) {
                best = entry.getKey();
            }
        }
        return best;
    }

    /** One line on why the pod is not on the extender's best node; empty when it is. */
    Optional<String> detour() {
        var best = extenderBest();
        if (best == null || best.equals(node)) {
            return Optional.empty();
        }
        long factor = weight * ExtenderSettings.SCORE_SCALE;
        var extenderPart = extender.get(node).equals(extender.get(best))
                ? String.format("the extender scored both %d/10 (x weight %d x 10 = +%d each)", extender.get(node), weight, extender.get(node) * factor)
                : String.format("the extender scored %d/10 vs %d/10 (x weight %d x 10 = +%d vs +%d)", extender.get(node), extender.get(best), weight,
                        extender.get(node) * factor, extender.get(best) * factor);
        var kubePart = String.format("kube-scheduler's own scores (least allocated + balanced cpu/memory, 0-200) %d vs %d",
                kube.get(node), kube.get(best));
        var outcome = total(node) == total(best)
                ? String.format("totals tie at %d and kube-scheduler breaks ties at random (seeded)", total(node))
                : String.format("total %d vs %d", total(node), total(best));
        return Optional.of(String.format("went to %s, not %s: %s; %s; %s", node, best, extenderPart, kubePart, outcome));
    }
}
