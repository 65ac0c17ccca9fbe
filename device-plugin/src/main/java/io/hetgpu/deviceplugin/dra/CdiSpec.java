package io.hetgpu.deviceplugin.dra;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Container Device Interface spec of one prepared claim: one CDI device per GPU (its device node), and the edits
 * every device of the spec brings (the driver's control and UVM nodes, and {@code NVIDIA_VISIBLE_DEVICES} naming the
 * claim's GPUs, which the NVIDIA container toolkit reads to mount the driver's libraries). Pure: the content as a
 * JSON-ready tree, the file name and the device IDs kubelet hands to the container runtime.
 *
 * <p>{@code /dev/nvidia<N>} is numbered by the GPU's NVML index, which is the driver's minor number where GPUs are
 * enumerated in PCI order, as on the machines hetgpu supports.
 */
public final class CdiSpec {

    /** A CDI version every runtime with DRA support reads (containerd 1.7+, CRI-O 1.28+). */
    static final String CDI_VERSION = "0.5.0";
    static final String CLASS = "claim";
    static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
    static final List<String> CONTROL_NODES = List.of("/dev/nvidiactl", "/dev/nvidia-uvm");

    private CdiSpec() {
    }

    /** {@code gpu.hetgpu.io/claim}: the CDI kind of the driver's specs. */
    public static String kind(String driver) {
        return driver + "/" + CLASS;
    }

    /** The spec's file name in the CDI folder: one per claim, found again from the claim's UID alone. */
    public static String fileName(String driver, String claimUid) {
        return driver + "-" + CLASS + "_" + claimUid + ".json";
    }

    /** The CDI device name of one GPU of the claim: unique across claims, as every spec in the folder shares one kind. */
    public static String deviceName(String claimUid, String gpuDeviceName) {
        return claimUid + "-" + gpuDeviceName;
    }

    /** The fully qualified CDI ID kubelet passes on ({@code gpu.hetgpu.io/claim=<uid>-gpu-3}). */
    public static String deviceId(String driver, String claimUid, String gpuDeviceName) {
        return kind(driver) + "=" + deviceName(claimUid, gpuDeviceName);
    }

    /** The spec's content for the claim's GPUs, given with their NVML index and UUID. */
    public static Map<String, Object> content(String driver, String claimUid, List<Gpu> gpus) {
        var devices = new ArrayList<Map<String, Object>>();
        for (var gpu : gpus) {
            devices.add(ordered("name", deviceName(claimUid, gpu.deviceName()),
                    "containerEdits", Map.of("deviceNodes", List.of(Map.of("path", "/dev/nvidia" + gpu.index())))));
        }
        var uuids = String.join(",", gpus.stream().map(Gpu::uuid).toList());
        var controls = CONTROL_NODES.stream().map(path -> Map.of("path", path)).toList();
        return ordered("cdiVersion", CDI_VERSION, "kind", kind(driver), "devices", devices,
                "containerEdits", ordered("env", List.of(VISIBLE_DEVICES + "=" + uuids), "deviceNodes", controls));
    }

    /** One GPU of a claim's spec. */
    public record Gpu(String deviceName, int index, String uuid) { }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        var map = new LinkedHashMap<String, Object>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
