package io.hetgpu.testcluster.draplacement;

import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.DeviceClass;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.ExactRequest;
import io.hetgpu.kubescheduler.dra.MatchAttribute;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * hetgpu's claim for a pod's GPUs, in the DRA allocator model's records: what the shipped admission policy (or claim
 * templates) makes of a pod by its priority and GPU count, against which plain first fit is measured. The names here
 * (class, request, subrequests, selectors, constraint attribute) are the one place the shipped YAML is held to.
 *
 * <ul>
 *   <li>high priority: {@code firstAvailable} with one subrequest per card tier, newest first, selector
 *       {@code device.attributes["gpu.hetgpu.io"].tier == N};</li>
 *   <li>low priority: the same, oldest first;</li>
 *   <li>normal priority: {@code exactly}, any tier;</li>
 *   <li>more than one GPU: a {@code matchAttribute} on {@code gpu.hetgpu.io/nvlinkSet<N>}, the smallest set size that
 *       holds the count (2, 4 or 8), so every GPU of the claim is in one NVLink-connected set.</li>
 * </ul>
 *
 * The API server takes at most {@link PrioritizedListScore#FIRST_AVAILABLE_MAX_SIZE} alternatives: with more tiers than
 * that, the first seven are listed and the eighth takes any tier, so the claim is never refused only for the length of
 * its list.
 */
public final class HetgpuClaims {

    /** hetgpu's DeviceClass: every GPU its driver publishes. */
    public static final String DEVICE_CLASS = HetgpuDra.DRIVER;
    public static final String CLASS_SELECTOR = "device.driver == \"" + HetgpuDra.DRIVER + "\"";
    /** The claim's one request. */
    public static final String REQUEST = "gpus";
    /** The last alternative of a list cut to the API's length: any tier. */
    public static final String ANY_TIER = "any-tier";

    /** A pod's priority level, as the extender's thresholds read it. */
    public enum Priority {
        HIGH, NORMAL, LOW
    }

    private HetgpuClaims() {
    }

    public static DeviceClass deviceClass() {
        return new DeviceClass(DEVICE_CLASS, List.of(CLASS_SELECTOR));
    }

    /** The selector of one tier's alternative. */
    public static String tierSelector(int tier) {
        return "device.attributes[\"" + HetgpuDra.DRIVER + "\"]." + HetgpuDra.TIER + " == " + tier;
    }

    /** The name of one tier's alternative (a DNS label, as the API requires). */
    public static String tierSubRequest(int tier) {
        return "tier-" + tier;
    }

    /**
     * The fully qualified attribute every GPU of a claim for {@code count} must share: the smallest NVLink set size that
     * holds the count; none for one GPU or more than the largest set.
     */
    public static Optional<String> nvlinkAttribute(int count) {
        if (count < 2) {
            return Optional.empty();
        }
        return NvlinkSets.SIZES.stream().filter(size -> size >= count).findFirst()
                .map(size -> HetgpuDra.DRIVER + "/" + HetgpuDra.nvlinkSet(size));
    }

    /**
     * The tiers a claim lists, in its order: newest first for high priority, oldest first for low, none for normal.
     * {@code tiers} are those the cluster's devices publish (or the card table's), in any order and with repeats.
     */
    public static List<Integer> order(Priority priority, List<Integer> tiers) {
        var distinct = tiers.stream().distinct();
        return switch (priority) {
            case HIGH -> distinct.sorted(Comparator.reverseOrder()).toList();
            case LOW -> distinct.sorted().toList();
            case NORMAL -> List.of();
        };
    }

    /** hetgpu's claim for {@code count} GPUs of a pod of {@code priority}, over the cluster's {@code tiers}. */
    public static Claim claim(String namespace, String name, Priority priority, int count, List<Integer> tiers) {
        if (count < 1) {
            throw new IllegalArgumentException("a claim asks for at least 1 GPU, got " + count);
        }
        var ordered = order(priority, tiers);
        DeviceRequest request;
        if (ordered.isEmpty()) {
            request = new DeviceRequest.Exactly(REQUEST, ExactRequest.count(DEVICE_CLASS, count));
        } else {
            var alternatives = new ArrayList<DeviceRequest.SubRequest>();
            int listed = ordered.size() <= PrioritizedListScore.FIRST_AVAILABLE_MAX_SIZE
                    ? ordered.size() : PrioritizedListScore.FIRST_AVAILABLE_MAX_SIZE - 1;
            for (int i = 0; i < listed; i++) {
                int tier = ordered.get(i);
                alternatives.add(new DeviceRequest.SubRequest(tierSubRequest(tier), ExactRequest.count(DEVICE_CLASS, count, tierSelector(tier))));
            }
            if (listed < ordered.size()) {
                alternatives.add(new DeviceRequest.SubRequest(ANY_TIER, ExactRequest.count(DEVICE_CLASS, count)));
            }
            request = new DeviceRequest.FirstAvailable(REQUEST, alternatives);
        }
        var constraints = nvlinkAttribute(count).map(attribute -> List.of(new MatchAttribute(List.of(REQUEST), attribute))).orElse(List.of());
        return new Claim(namespace, name, List.of(request), constraints);
    }

    /** The plain claim hetgpu is measured against: {@code exactly: {deviceClassName, count}}, first fit. */
    public static Claim plain(String namespace, String name, int count) {
        return new Claim(namespace, name, List.of(new DeviceRequest.Exactly(REQUEST, ExactRequest.count(DEVICE_CLASS, count))));
    }
}
