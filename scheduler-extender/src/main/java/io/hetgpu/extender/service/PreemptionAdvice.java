package io.hetgpu.extender.service;

import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the preempt verb answered for one pod and why: the candidates it kept (the set freed, the work lost) and
 * those it refused. The extender cannot know which kept node kube-scheduler then picks, so this is advice about
 * the choice, not a record of an eviction.
 *
 * @param refused node to why evicting its proposed victims would not serve the pod
 */
public record PreemptionAdvice(PodRequest pod, List<Kept> kept, Map<String, String> refused) {

    /**
     * A kept candidate.
     *
     * @param freed      what the pod would get there, e.g. "4 A100 (NVLink)"; empty when the node cannot be judged
     * @param victimUids the pods kube-scheduler proposed to evict there
     */
    public record Kept(String node, List<String> victimUids, String freed, long gpuSecondsLost) {

        public Kept {
            victimUids = List.copyOf(victimUids);
        }

        public int victims() {
            return victimUids.size();
        }
    }

    public PreemptionAdvice {
        kept = List.copyOf(kept);
        refused = Map.copyOf(refused);
    }

    /**
     * Why a victim goes, for an Event on it, when the verb kept a single node (kube-scheduler then evicts exactly its
     * victims); empty otherwise, as kube-scheduler may yet pick another kept node.
     */
    public java.util.Optional<String> victimsReason() {
        if (kept.size() != 1) {
            return java.util.Optional.empty();
        }
        var node = kept.getFirst();
        return java.util.Optional.of("hetgpu chose " + node.node() + " for preemption by " + pod.displayName() + " (priority "
                + pod.specPriority() + ")" + (node.freed().isEmpty() ? "" : ": evicting its " + node.victims() + " pod"
                + (node.victims() == 1 ? "" : "s") + " frees " + node.freed()) + String.format(Locale.ROOT,
                "; %.1f GPU-hours since their last checkpoints are lost", node.gpuSecondsLost() / 3600.0));
    }

    /** One line for people: "evicting 2 pods on dgx-a100-1 frees 4 A100 (NVLink); 1.5 GPU-hours lost since their last checkpoint". */
    public String explain() {
        if (kept.isEmpty()) {
            return "hetgpu kept none of the " + refused.size() + " nodes proposed for preemption: "
                    + String.join("; ", refused.entrySet().stream().sorted(Map.Entry.comparingByKey())
                            .map(entry -> entry.getKey() + ": " + entry.getValue()).toList());
        }
        var parts = kept.stream().map(k -> "evicting " + k.victims() + " pod" + (k.victims() == 1 ? "" : "s") + " on " + k.node()
                + (k.freed().isEmpty() ? "" : " frees " + k.freed()) + "; "
                + String.format(Locale.ROOT, "%.1f", k.gpuSecondsLost() / 3600.0) + " GPU-hours lost since their last checkpoint").toList();
        return "hetgpu kept " + kept.size() + " of " + (kept.size() + refused.size()) + " nodes proposed for preemption: "
                + String.join(" | ", parts);
    }
}
