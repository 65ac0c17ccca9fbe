package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A simulated node's GPUs as NVIDIA's DRA driver ({@code gpu.nvidia.com}, NVIDIA/k8s-dra-driver-gpu's gpu-kubelet-plugin)
 * publishes them: one ResourceSlice, its pool named after the node, a device {@code gpu-<index>} per GPU with the
 * attributes the driver sets ({@code type}, {@code uuid}, {@code index}, {@code minor}, {@code productName}, {@code brand},
 * {@code architecture}, {@code cudaComputeCapability}, {@code driverVersion}, {@code cudaDriverVersion} as versions,
 * {@code resource.kubernetes.io/pciBusID} and {@code pcieRoot}) and {@code memory} as capacity. The PCIe root is derived
 * from the bus ID's domain and the NUMA node, which the simulated profiles hold; the real driver reads it from sysfs.
 */
public final class NvidiaDraSlice {

    public static final String DRIVER = "gpu.nvidia.com";
    /** The class NVIDIA's chart installs for whole GPUs. */
    public static final String GPU_CLASS = "gpu.nvidia.com";

    private NvidiaDraSlice() {
    }

    public static ResourceSlice of(String node, NodeTopology topology) {
        var devices = topology.devices().stream().map(gpu -> device(gpu, topology)).toList();
        return new ResourceSliceBuilder().withNewMetadata().withName(node + "-" + DRIVER).endMetadata()
                .withNewSpec().withDriver(DRIVER).withNodeName(node)
                .withNewPool().withName(node).withGeneration(1L).withResourceSliceCount(1L).endPool()
                .withDevices(devices).endSpec().build();
    }

    /** The DeviceClass of NVIDIA's chart; {@code extendedResourceName} set, the class also serves plain requests for it. */
    public static DeviceClass gpuClass(String extendedResourceName) {
        var spec = new DeviceClassBuilder().withNewMetadata().withName(GPU_CLASS).endMetadata().withNewSpec()
                .addNewSelector().withNewCel().withExpression("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")
                .endCel().endSelector();
        if (extendedResourceName != null) {
            spec.withExtendedResourceName(extendedResourceName);
        }
        return spec.endSpec().build();
    }

    private static Device device(GpuDevice gpu, NodeTopology topology) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        attributes.put("type", text("gpu"));
        attributes.put("uuid", text(gpu.uuid()));
        attributes.put("index", new DeviceAttributeBuilder().withInt((long) gpu.index()).build());
        attributes.put("minor", new DeviceAttributeBuilder().withInt((long) gpu.index()).build());
        attributes.put("productName", text(gpu.product()));
        attributes.put("brand", text("Nvidia"));
        attributes.put("architecture", text(architecture(gpu)));
        attributes.put("cudaComputeCapability", version(gpu.computeCapability().major() + "." + gpu.computeCapability().minor()));
        attributes.put("driverVersion", version(topology.driverVersion()));
        attributes.put("cudaDriverVersion", version(topology.cudaDriverVersion()));
        attributes.put("resource.kubernetes.io/pciBusID", text(gpu.pciBusId()));
        attributes.put("resource.kubernetes.io/pcieRoot", text(pcieRoot(gpu)));
        return new DeviceBuilder().withName("gpu-" + gpu.index()).withAttributes(attributes)
                .withCapacity(Map.of("memory", new DeviceCapacityBuilder().withValue(new Quantity(gpu.memoryMiB() + "Mi")).build()))
                .build();
    }

    private static DeviceAttribute text(String value) {
        return new DeviceAttributeBuilder().withString(value).build();
    }

    /**
     * A version as the driver writes it: parsed leniently and printed as semver ({@code 550.90.07} becomes
     * {@code 550.90.7}, {@code 9.0} becomes {@code 9.0.0}).
     */
    static DeviceAttribute version(String value) {
        var parts = (value == null ? "" : value).split("\\.");
        var numbers = new long[3];
        for (int i = 0; i < Math.min(3, parts.length); i++) {
            try {
                numbers[i] = Long.parseLong(parts[i].replaceAll("[^0-9].*$", "").isEmpty() ? "0" : parts[i].replaceAll("[^0-9].*$", ""));
            } catch (NumberFormatException e) {
                numbers[i] = 0;
            }
        }
        return new DeviceAttributeBuilder().withVersion(numbers[0] + "." + numbers[1] + "." + numbers[2]).build();
    }

    /** go-nvlib's architecture names: the family capitalised ({@code Hopper}, {@code Ampere}). */
    private static String architecture(GpuDevice gpu) {
        var label = gpu.family().label();
        return label.substring(0, 1).toUpperCase(Locale.ROOT) + label.substring(1);
    }

    private static String pcieRoot(GpuDevice gpu) {
        var domain = gpu.pciBusId().contains(":") ? gpu.pciBusId().substring(0, gpu.pciBusId().indexOf(':')) : "0000";
        return "pci" + domain + ":" + String.format("%02x", Math.max(0, gpu.numaNode()));
    }
}
