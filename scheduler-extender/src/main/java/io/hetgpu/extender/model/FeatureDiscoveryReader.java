package io.hetgpu.extender.model;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads the labels NVIDIA's GPU Feature Discovery writes on a node into a {@link NodeGpuSource.FeatureDiscoveryLabels}.
 * A label with a value GFD would not write is an {@link IllegalArgumentException} naming the label and the
 * value, so the caller can fall back to the node's allocatable count and say why.
 */
public final class FeatureDiscoveryReader {

    private static final Pattern WHOLE_NUMBER = Pattern.compile("\\d{1,9}");
    private static final String SHARED_SUFFIX = "-SHARED";

    private FeatureDiscoveryReader() {
    }

    /** Whether GFD has labelled the node at all. */
    public static boolean labelled(Map<String, String> labels) {
        return labels.containsKey(NvidiaKeys.GFD_PRODUCT);
    }

    /**
     * The node's GPUs as GFD describes them, or empty when it has not labelled the node.
     *
     * @param count GPUs kubelet offers (the count label when it offers none)
     * @param notes why a better source was not used
     * @throws IllegalArgumentException when a label GFD writes is missing or malformed, or names MIG slices
     */
    public static Optional<NodeGpuSource.FeatureDiscoveryLabels> read(Map<String, String> labels, int count, String notes) {
        var product = labels.get(NvidiaKeys.GFD_PRODUCT);
        if (product == null) {
            return Optional.empty();
        }
        var model = modelOf(product);
        long memory = number(labels, NvidiaKeys.GFD_MEMORY, "memory of one GPU in MiB such as 16160");
        if (memory == 0) {
            throw new IllegalArgumentException(NvidiaKeys.GFD_MEMORY + ": expected the memory of one GPU in MiB, got \"0\"");
        }
        int major = (int) number(labels, NvidiaKeys.GFD_COMPUTE_MAJOR, "compute capability major number such as 8");
        int minor = (int) number(labels, NvidiaKeys.GFD_COMPUTE_MINOR, "compute capability minor number such as 0");
        if (major == 0) {
            throw new IllegalArgumentException(NvidiaKeys.GFD_COMPUTE_MAJOR + ": expected 1 or more, got \"0\"");
        }
        int replicas = labels.containsKey(NvidiaKeys.GFD_REPLICAS)
                ? (int) Math.max(1, number(labels, NvidiaKeys.GFD_REPLICAS, "replicas per GPU such as 1")) : 1;
        if (product.endsWith(SHARED_SUFFIX) && replicas == 1) {
            // A renamed shared resource keeps the plain product name; an unrenamed one says SHARED but the
            // replicas label is what tells how many ways.
            replicas = 2;
        }
        var clique = labels.getOrDefault(NvidiaKeys.GFD_CLIQUE, "").strip();
        return Optional.of(new NodeGpuSource.FeatureDiscoveryLabels(product, model, memory, new ComputeCapability(major, minor), count,
                replicas, !clique.isEmpty(), notes));
    }

    /**
     * The card model a GFD product label names, as hetgpu's inventory names it: {@code Tesla-V100-SXM2-16GB}
     * and {@code Tesla V100-SXM2-16GB} (NVML's) both give {@code V100}. GFD turned the product's spaces into
     * dashes, so dashes are read as spaces; the rest is {@link CardModel}'s rule.
     *
     * @throws IllegalArgumentException when the label is empty or names MIG slices (a slice is not a whole GPU:
     *                                  its memory and speed are a fraction of the card's)
     */
    public static String modelOf(String product) {
        var name = product == null ? "" : product.strip();
        if (name.toUpperCase(Locale.ROOT).endsWith(SHARED_SUFFIX)) {
            name = name.substring(0, name.length() - SHARED_SUFFIX.length());
        }
        if (name.toUpperCase(Locale.ROOT).contains("-MIG-")) {
            throw new IllegalArgumentException(NvidiaKeys.GFD_PRODUCT + ": " + Quote.of(product)
                    + " names MIG slices (mig-strategy single), not whole GPUs");
        }
        if (name.isBlank() || name.replace("-", "").isBlank()) {
            throw new IllegalArgumentException(NvidiaKeys.GFD_PRODUCT + ": expected a product name such as Tesla-V100-SXM2-16GB, got \""
                    + product + "\"");
        }
        return CardModel.fromProductName(name.replace('-', ' '));
    }

    /** The GPUs GFD counted on the node ({@code nvidia.com/gpu.count}), for when kubelet offers none of them. */
    static int labelledCount(Map<String, String> labels) {
        return (int) number(labels, NvidiaKeys.GFD_COUNT, "a number of GPUs such as 8");
    }

    private static long number(Map<String, String> labels, String key, String expected) {
        var value = labels.get(key);
        if (value == null) {
            throw new IllegalArgumentException(key + ": missing (expected " + expected + ")");
        }
        if (!WHOLE_NUMBER.matcher(value).matches()) {
            throw new IllegalArgumentException(key + ": expected " + expected + ", got " + Quote.of(value));
        }
        return Long.parseLong(value);
    }
}
