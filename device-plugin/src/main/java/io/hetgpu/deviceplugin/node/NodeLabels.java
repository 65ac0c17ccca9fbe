package io.hetgpu.deviceplugin.node;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_COMPUTE;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_COUNT;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_FAMILY;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_MEMORY;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_MODEL;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_NVLINK;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_PRESENT;
import static io.hetgpu.gpu.inventory.HetgpuKeys.LABEL_GPU_TIER;

/**
 * The {@code hetgpu.io/gpu.*} labels of a node.
 *
 * <p>kubelet may hand a pod any GPU of the node, so on a node with mixed cards every label is a floor
 * that holds for each GPU: model, family and tier are those of the lowest-tier card (ties: less memory,
 * then lower compute capability), and memory and compute are the smallest over all GPUs. A selector
 * such as {@code gpu.tier > 40} or {@code gpu.memory > 30000} is then never satisfied by a GPU that
 * does not meet it. The per-device truth is in the {@code gpu-inventory} annotation.
 */
public final class NodeLabels {

    /** Every label this class writes: the only labels the publisher ever changes or removes. */
    public static final List<String> OWNED = List.of(LABEL_GPU_PRESENT, LABEL_GPU_MODEL, LABEL_GPU_FAMILY,
            LABEL_GPU_TIER, LABEL_GPU_MEMORY, LABEL_GPU_COUNT, LABEL_GPU_COMPUTE, LABEL_GPU_NVLINK);

    private NodeLabels() {
    }

    public static Map<String, String> of(NodeTopology topology, CardCatalog catalog) {
        var labels = new TreeMap<String, String>();
        labels.put(LABEL_GPU_PRESENT, Boolean.toString(topology.size() > 0));
        labels.put(LABEL_GPU_COUNT, Integer.toString(topology.size()));
        if (topology.size() == 0) {
            return labels;
        }
        var devices = topology.devices();
        var weakest = devices.stream()
                .min(Comparator.<GpuDevice>comparingInt(device -> tierRank(catalog, device))
                        .thenComparingLong(GpuDevice::memoryMiB)
                        .thenComparing(GpuDevice::computeCapability))
                .orElseThrow();
        labels.put(LABEL_GPU_MODEL, labelValue(weakest.model()));
        labels.put(LABEL_GPU_FAMILY, weakest.family().label());
        labels.put(LABEL_GPU_TIER, Integer.toString(tierRank(catalog, weakest)));
        labels.put(LABEL_GPU_MEMORY, Long.toString(devices.stream().mapToLong(GpuDevice::memoryMiB).min().orElseThrow()));
        labels.put(LABEL_GPU_COMPUTE, devices.stream().map(GpuDevice::computeCapability)
                .min(Comparator.naturalOrder()).map(ComputeCapability::toString).orElseThrow());
        labels.put(LABEL_GPU_NVLINK, Boolean.toString(topology.hasNvlink()));
        return labels;
    }

    private static int tierRank(CardCatalog catalog, GpuDevice device) {
        return catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB()).rank();
    }

    /**
     * A Kubernetes label value: at most 63 characters of {@code [A-Za-z0-9._-]}, starting and ending
     * alphanumeric. Model names are normalised already; this guards against a driver's odd product name.
     */
    static String labelValue(String text) {
        var value = text.replaceAll("[^A-Za-z0-9._-]+", "-");
        value = value.length() > 63 ? value.substring(0, 63) : value;
        return value.replaceAll("^[^A-Za-z0-9]+", "").replaceAll("[^A-Za-z0-9]+$", "");
    }
}
