package io.hetgpu.testcluster.cluster;

import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The labels NVIDIA's GPU Feature Discovery writes on a node, derived as GFD derives them from NVML
 * (its {@code internal/lm} labelers), for a node of the test cluster that hetgpu's device plugin does not serve.
 */
final class FeatureDiscoveryLabelling {

    private FeatureDiscoveryLabelling() {
    }

    static Map<String, String> of(NodeTopology topology) {
        var device = topology.device(0);
        var labels = new LinkedHashMap<String, String>();
        labels.put("nvidia.com/gpu.present", "true");
        labels.put(NvidiaKeys.GFD_PRODUCT, product(device.product()));
        labels.put(NvidiaKeys.GFD_MEMORY, Long.toString(device.memoryMiB()));
        labels.put(NvidiaKeys.GFD_COUNT, Integer.toString(topology.size()));
        labels.put(NvidiaKeys.GFD_REPLICAS, "1");
        labels.put("nvidia.com/gpu.sharing-strategy", "none");
        labels.put(NvidiaKeys.GFD_COMPUTE_MAJOR, Integer.toString(device.computeCapability().major()));
        labels.put(NvidiaKeys.GFD_COMPUTE_MINOR, Integer.toString(device.computeCapability().minor()));
        labels.put(NvidiaKeys.GFD_FAMILY, family(device.family()));
        labels.put("nvidia.com/mig.capable", "false");
        return labels;
    }

    /** GFD's sanitising: characters outside {@code [A-Za-z0-9-_. ]} dropped, runs of spaces made one dash. */
    static String product(String nvmlName) {
        return String.join("-", nvmlName.replaceAll("[^A-Za-z0-9\\-_. ]", "").strip().split("\\s+"));
    }

    private static String family(GpuArchitecture architecture) {
        return switch (architecture) {
            case ADA -> "ada-lovelace";
            case UNKNOWN -> "undefined";
            default -> architecture.label();
        };
    }
}
