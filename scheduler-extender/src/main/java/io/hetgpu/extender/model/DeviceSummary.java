package io.hetgpu.extender.model;

import io.hetgpu.gpu.GpuDevice;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Short text for a group of devices in reasons: "8 V100 (16 GiB, cc 7.0)", "2 T4 + 1 V100 (…)". */
public final class DeviceSummary {

    private DeviceSummary() {
    }

    public static String of(List<GpuDevice> devices) {
        if (devices.isEmpty()) {
            return "no GPUs";
        }
        Map<String, Integer> counts = new TreeMap<>();
        Map<String, GpuDevice> example = new TreeMap<>();
        for (var device : devices) {
            counts.merge(device.model(), 1, Integer::sum);
            example.putIfAbsent(device.model(), device);
        }
        var text = new StringBuilder();
        for (var entry : counts.entrySet()) {
            if (!text.isEmpty()) {
                text.append(" + ");
            }
            var device = example.get(entry.getKey());
            text.append(entry.getValue()).append(' ').append(entry.getKey())
                    .append(" (").append(gib(device.memoryMiB())).append(", cc ").append(device.computeCapability()).append(')');
        }
        return text.toString();
    }

    /** "2 free V100" or "3 free (2 T4, 1 V100)". */
    public static String free(List<GpuDevice> devices) {
        if (devices.isEmpty()) {
            return "0 free";
        }
        Map<String, Integer> counts = new TreeMap<>();
        devices.forEach(device -> counts.merge(device.model(), 1, Integer::sum));
        if (counts.size() == 1) {
            return devices.size() + " free " + counts.keySet().iterator().next();
        }
        var parts = counts.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).toList();
        return devices.size() + " free (" + String.join(", ", parts) + ")";
    }

    public static String gib(long mib) {
        return mib % 1024 == 0 || mib > 10 * 1024 ? Math.round(mib / 1024.0) + " GiB" : mib + " MiB";
    }
}
