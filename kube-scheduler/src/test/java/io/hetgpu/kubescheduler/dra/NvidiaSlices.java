package io.hetgpu.kubescheduler.dra;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Devices shaped as NVIDIA's DRA driver publishes them (gpu.nvidia.com, one pool per node named after it). */
final class NvidiaSlices {

    static final String DRIVER = "gpu.nvidia.com";
    static final DeviceClass GPU_CLASS = new DeviceClass("gpu.nvidia.com", List.of("device.driver == 'gpu.nvidia.com'"));

    private NvidiaSlices() {
    }

    static Device gpu(int index, String product, String architecture, String computeCapability, int memoryGi, String pcieRoot) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        attributes.put("type", new DeviceAttribute.StringValue("gpu"));
        attributes.put("uuid", new DeviceAttribute.StringValue("GPU-" + product.replace(' ', '-') + "-" + index));
        attributes.put("index", new DeviceAttribute.IntValue(index));
        attributes.put("minor", new DeviceAttribute.IntValue(index));
        attributes.put("productName", new DeviceAttribute.StringValue(product));
        attributes.put("brand", new DeviceAttribute.StringValue("Nvidia"));
        attributes.put("architecture", new DeviceAttribute.StringValue(architecture));
        attributes.put("cudaComputeCapability", new DeviceAttribute.VersionValue(computeCapability));
        attributes.put("driverVersion", new DeviceAttribute.VersionValue("570.124.6"));
        attributes.put("cudaDriverVersion", new DeviceAttribute.VersionValue("12.8.0"));
        attributes.put("resource.kubernetes.io/pcieRoot", new DeviceAttribute.StringValue(pcieRoot));
        return new Device("gpu-" + index, attributes, Map.of("memory", Quantity.parse(memoryGi + "Gi").orElseThrow()));
    }

    static Device h100(int index, String pcieRoot) {
        return gpu(index, "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 80, pcieRoot);
    }

    static Device a100(int index, String pcieRoot) {
        return gpu(index, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 40, pcieRoot);
    }

    static Device t4(int index) {
        return gpu(index, "Tesla T4", "Turing", "7.5.0", 15, "pci0000:00");
    }

    static ResourceSlice slice(String node, Device... devices) {
        return ResourceSlice.nodeLocal(node + "-gpu.nvidia.com", DRIVER, node, List.of(devices));
    }

    static Map<String, DeviceClass> classes(DeviceClass... extra) {
        var classes = new LinkedHashMap<String, DeviceClass>();
        classes.put(GPU_CLASS.name(), GPU_CLASS);
        for (var c : extra) {
            classes.put(c.name(), c);
        }
        return classes;
    }
}
