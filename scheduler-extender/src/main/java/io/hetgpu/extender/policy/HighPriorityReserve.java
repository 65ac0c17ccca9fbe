package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import java.util.Locale;

/**
 * The admin's {@code highPriorityReserve}: the cluster's last free GPUs of its top tier go to
 * high-priority pods only. Without preemption an urgent job that arrives when every new card is taken
 * waits until one is released, which with multi-day training jobs can take days; a few cards kept free
 * let it start at once. Other pods still use the top tier while more than the reserve is free.
 *
 * @param gpus top-tier GPUs kept free; 0 turns the reserve off
 */
public record HighPriorityReserve(int gpus) {

    public static final HighPriorityReserve NONE = new HighPriorityReserve(0);

    public HighPriorityReserve {
        if (gpus < 0) {
            throw new IllegalArgumentException("highPriorityReserve: expected 0 or more GPUs, got " + gpus);
        }
    }

    public boolean isOn() {
        return gpus > 0;
    }

    /**
     * The tier closed to this pod: the top tier when the pod is not high priority and taking its GPUs from
     * that tier would leave fewer than the reserve free; else {@link ClosedTier#NONE}.
     */
    public ClosedTier closedTo(PodRequest pod, PriorityThresholds thresholds, TopTierHeadroom headroom) {
        if (!isOn() || !pod.needsGpus() || headroom == TopTierHeadroom.NONE || TierPreference.isHighPriority(pod, thresholds)
                || headroom.free() - pod.gpuCount() >= gpus) {
            return ClosedTier.NONE;
        }
        var ignored = thresholds.ignoredHint(pod);
        return new ClosedTier(headroom.rank(), String.format(Locale.ROOT,
                "the cluster's last %d free %s are kept for high-priority pods (%d free now)", gpus, headroom.models(), headroom.free())
                + (ignored.isEmpty() ? "" : "; " + ignored));
    }

    /**
     * Tiers whose cards a pod may not take now, and why: the reserve's top tier for an ordinary pod, or for a
     * high-priority pod the tiers below the cards preemption can free for it ({@link EvictionFloor}).
     *
     * @param lowest        the lowest rank closed
     * @param highest       the highest rank closed
     * @param models        card models closed whatever their tier (a workload's slow cards)
     * @param reason        the node's reason when only those cards would have fitted the pod
     * @param openReachable for an eviction floor, the GPUs preemption could leave free in the tiers left open; a job
     *                      that needs more than these is not held to it, since no eviction could seat it whole there
     *                      ({@link Integer#MAX_VALUE} where the tiers stay closed whatever the job's size)
     */
    public record ClosedTier(int lowest, int highest, java.util.Set<String> models, String reason, int openReachable,
                             java.util.Map<String, String> reasonByModel) {

        public static final ClosedTier NONE = new ClosedTier(Integer.MIN_VALUE, Integer.MIN_VALUE, java.util.Set.of(), "");

        public ClosedTier {
            models = java.util.Set.copyOf(models);
            reasonByModel = java.util.Map.copyOf(reasonByModel);
        }

        public ClosedTier(int lowest, int highest, java.util.Set<String> models, String reason) {
            this(lowest, highest, models, reason, Integer.MAX_VALUE, java.util.Map.of());
        }

        /** One tier closed. */
        public ClosedTier(int rank, String reason) {
            this(rank, rank, java.util.Set.of(), reason);
        }

        /** Every tier below {@code rank}. */
        public static ClosedTier below(int rank, String reason) {
            return new ClosedTier(Integer.MIN_VALUE + 1, rank - 1, java.util.Set.of(), reason);
        }

        /** Every card of every node, whatever its model: a pod that waits for room ({@link JobHeadroom}) takes none. */
        public static ClosedTier everyCard(String reason) {
            return new ClosedTier(Integer.MIN_VALUE + 1, Integer.MAX_VALUE, java.util.Set.of(), reason);
        }

        boolean closesEveryCard() {
            return lowest == Integer.MIN_VALUE + 1 && highest == Integer.MAX_VALUE;
        }

        /** These card models, whatever their tier. */
        public static ClosedTier models(java.util.Set<String> models, String reason) {
            return new ClosedTier(Integer.MIN_VALUE, Integer.MIN_VALUE, models, reason);
        }

        /** These card models, whatever their tier, each refused with its own reason ({@code reason} for any other). */
        public static ClosedTier models(java.util.Map<String, String> reasonByModel, String reason) {
            return new ClosedTier(Integer.MIN_VALUE, Integer.MIN_VALUE, reasonByModel.keySet(), reason, Integer.MAX_VALUE, reasonByModel);
        }

        /** The same tiers closed, as a floor that preemption could satisfy for at most {@code gpus} GPUs. */
        public ClosedTier withOpenReachable(int gpus) {
            return new ClosedTier(lowest, highest, models, reason, gpus, reasonByModel);
        }

        /** Why the node is refused when only its closed cards would have fitted: its first closed model's own reason, if any. */
        String reasonFor(NodeState node) {
            if (reasonByModel.isEmpty() || !node.gpus().source().knowsModel()) {
                return reason;
            }
            var topology = node.gpus().topology();
            for (int position = 0; position < topology.size(); position++) {
                var own = reasonByModel.get(topology.device(position).model());
                if (own != null) {
                    return own;
                }
            }
            return reason;
        }

        /** What a job needing {@code gpus} in all is held to: these tiers, or none where they would keep it out for good. */
        public ClosedTier forJobOf(int gpus) {
            return gpus > openReachable ? NONE : this;
        }

        /** The positions of the node's GPUs of the closed tiers. */
        long mask(NodeState node) {
            if (closesEveryCard()) {
                int size = node.gpus().size();
                return size >= Long.SIZE ? -1L : (1L << size) - 1;
            }
            long mask = 0;
            if (!node.gpus().source().knowsModel()) {
                // Their middle rank is made up and may equal the top tier's by chance: they are not its cards.
                return 0;
            }
            var tiers = node.gpus().tiers();
            for (int position = 0; position < tiers.size(); position++) {
                int rank = tiers.get(position).rank();
                if ((rank >= lowest && rank <= highest) || (!models.isEmpty() && models.contains(node.gpus().topology().device(position).model()))) {
                    mask |= 1L << position;
                }
            }
            return mask;
        }
    }
}
