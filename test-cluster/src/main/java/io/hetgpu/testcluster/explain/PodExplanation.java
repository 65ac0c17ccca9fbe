package io.hetgpu.testcluster.explain;

import java.util.List;

/**
 * Where one pod would go and why, or why it would wait and what would have to change: one entry of what explain prints,
 * as text ({@link ExplainText}) or JSON ({@link ExplainJson}).
 *
 * @param workload  what makes the pod ("Job bert-finetune"); "Pod" for a pod named on the command line
 * @param job       the job of several pods it is placed with, or null for a pod placed alone
 * @param ranking   the nodes it could take, best first, with kube-scheduler's total and its parts; empty when no node fits
 * @param refusals  the nodes refused, grouped by reason, most nodes first
 * @param changes   what would have to change for it to be placed now; empty for a pod placed
 */
record PodExplanation(String namespace, String name, String workload, JobPart job, Outcome outcome, List<Rank> ranking,
                      List<Refusal> refusals, List<String> changes) {

    PodExplanation {
        ranking = List.copyOf(ranking);
        refusals = List.copyOf(refusals);
        changes = List.copyOf(changes);
    }

    String key() {
        return namespace + "/" + name;
    }

    /**
     * The job a pod belongs to, as the extender reads it.
     *
     * @param members     its member count, or -1 when unknown
     * @param sizeUnknown why the count is unknown ("" when known)
     * @param whole       whether it is a job of several pods, placed all at once or not at all
     */
    record JobPart(String key, int members, String sizeUnknown, boolean whole) {
    }

    /** What became of the pod. */
    sealed interface Outcome permits Placed, Nominated, Pending, Failed, Refused, NotForHetgpu, AlreadyBound {
        /** One word for tools. */
        default String word() {
            return switch (this) {
                case Placed placed -> "placed";
                case Nominated nominated -> "nominated";
                case Pending pending -> "pending";
                case Failed failed -> "failed";
                case Refused refused -> "refused";
                case NotForHetgpu other -> "not-for-hetgpu";
                case AlreadyBound bound -> "already-bound";
            };
        }
    }

    /**
     * It would go to {@code node}.
     *
     * @param devices  the GPUs the extender's bind verb would record for it, as device IDs in the container's order
     * @param cards    what they are ("8x H100"); "" for a pod without GPUs
     * @param tiedWith nodes with the same total, among which kube-scheduler picks at random (explain shows the first by name)
     * @param seated   its job's plan gave it this node (kube-scheduler then has one node to offer and scores nothing)
     */
    record Placed(String node, List<String> devices, String cards, List<String> tiedWith, boolean seated) implements Outcome {
        Placed {
            devices = List.copyOf(devices);
            tiedWith = List.copyOf(tiedWith);
        }
    }

    /** No node takes it now; kube-scheduler's preemption would evict {@code victims} (namespace/name) on {@code node} for it. */
    record Nominated(String node, List<String> victims) implements Outcome {
        Nominated {
            victims = List.copyOf(victims);
        }
    }

    /** No node takes it and preemption frees none: it would stay Pending. {@code message} is kube-scheduler's event text. */
    record Pending(String message) implements Outcome {
        @Override
        public String word() {
            return "pending";
        }
    }

    /** The attempt itself fails (an extender error, a bind refused); kube-scheduler retries it. */
    record Failed(String error) implements Outcome {
        @Override
        public String word() {
            return "failed";
        }
    }

    /** The API server would refuse to create it (admission), in its words. */
    record Refused(String reason) implements Outcome {
        @Override
        public String word() {
            return "refused";
        }
    }

    /** It names another scheduler: hetgpu never sees it. */
    record NotForHetgpu(String schedulerName) implements Outcome {
        @Override
        public String word() {
            return "not-for-hetgpu";
        }
    }

    /** A pod named on the command line that is bound already. */
    record AlreadyBound(String node) implements Outcome {
        @Override
        public String word() {
            return "already-bound";
        }
    }

    /**
     * A node the pod could take.
     *
     * @param total         kube-scheduler's total (the extender's points plus its own), null where kube-scheduler scored nothing
     * @param extender      the extender's score 0..10
     * @param kubeScheduler kube-scheduler's own score 0..200 (least allocated plus balanced cpu/memory), null where it scored nothing
     * @param offer         what the node gives the pod ("8x H100, tier 85, 18 NVLinks per GPU pair")
     * @param behind        where it trails the extender's best, each preference in its own unit; "" for the best
     */
    record Rank(String node, Long total, int extender, Long kubeScheduler, String offer, String behind) {
    }

    /** Nodes refused for one reason. */
    record Refusal(String reason, List<String> nodes, boolean unresolvable) {
        Refusal {
            nodes = List.copyOf(nodes);
        }
    }
}
