package io.hetgpu.extender;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTermBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CELDeviceSelectorBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelectorBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.hetgpu.extender.model.DraLookup;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** DRA objects as NVIDIA's GPU driver, hetgpu's and kube-scheduler write them, for tests. */
public final class TestDra {

    public static final String NVIDIA = "gpu.nvidia.com";
    public static final String HETGPU = "gpu.hetgpu.io";
    /** The selector of NVIDIA's DeviceClass gpu.nvidia.com: whole GPUs of its driver. */
    public static final String NVIDIA_CLASS_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";

    private TestDra() {
    }

    /** A whole GPU as NVIDIA's kubelet plugin publishes it. */
    public static Device nvidiaGpu(String name, String product, String architecture, String computeCapability, String memory) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        attributes.put("type", text("gpu"));
        attributes.put("uuid", text("GPU-" + name));
        attributes.put("productName", text(product));
        attributes.put("brand", text("Nvidia"));
        attributes.put("architecture", text(architecture));
        attributes.put("cudaComputeCapability", version(computeCapability));
        attributes.put("driverVersion", version("550.54.15"));
        return new DeviceBuilder().withName(name).withAttributes(attributes)
                .withCapacity(Map.of("memory", new DeviceCapacityBuilder().withValue(new Quantity(memory)).build())).build();
    }

    /** A node's GPUs as hetgpu's driver publishes them: the shared contract's devices ({@link HetgpuDra#devices}) as the API holds them. */
    public static List<Device> hetgpuGpus(NodeTopology topology, CardCatalog catalog) {
        return HetgpuDra.devices(topology, catalog, Map.of()).stream().map(TestDra::hetgpuDevice).toList();
    }

    /** One device of the shared contract, its typed values as the API's attribute kinds. */
    public static Device hetgpuDevice(HetgpuDra.Device device) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        device.attributes().forEach((name, value) -> attributes.put(name, switch (value) {
            case HetgpuDra.Value.Text text -> text(text.value());
            case HetgpuDra.Value.Int number -> new DeviceAttributeBuilder().withInt(number.value()).build();
            case HetgpuDra.Value.Version semver -> version(semver.value());
        }));
        return new DeviceBuilder().withName(device.name()).withAttributes(attributes).withCapacity(Map.of(HetgpuDra.MEMORY,
                new DeviceCapacityBuilder().withValue(new Quantity(Long.toString(device.memoryBytes()))).build())).build();
    }

    /** hetgpu's DeviceClass: every device of its driver. */
    public static DeviceClass hetgpuClass() {
        return deviceClass(HETGPU, null, "device.driver == 'gpu.hetgpu.io'");
    }

    /**
     * hetgpu's claim as its admission writes it: one subrequest of hetgpu's class per card tier, in the given order
     * ({@code device.attributes["gpu.hetgpu.io"].tier == T}), and for several GPUs all of them on one NVLink set of the
     * smallest size that holds them.
     */
    public static ResourceClaim hetgpuClaim(String namespace, String name, int gpus, List<Integer> tiers) {
        var alternatives = new Object[tiers.size() * 2];
        for (int i = 0; i < tiers.size(); i++) {
            alternatives[2 * i] = gpus;
            alternatives[2 * i + 1] = "device.attributes[\"gpu.hetgpu.io\"].tier == " + tiers.get(i);
        }
        var claim = claim(namespace, name, firstAvailable("gpus", HETGPU, alternatives));
        return gpus > 1 ? onOneNvlinkSet(claim, gpus <= 2 ? 2 : gpus <= 4 ? 4 : 8) : claim;
    }

    /** The claim with a constraint that all its devices share one NVLink set of {@code size} ({@code gpu.hetgpu.io/nvlinkSet<size>}). */
    public static ResourceClaim onOneNvlinkSet(ResourceClaim claim, int size, String... requests) {
        return new ResourceClaimBuilder(claim).editSpec().editDevices().addNewConstraint()
                .withMatchAttribute(HETGPU + "/" + HetgpuDra.nvlinkSet(size)).withRequests(requests).endConstraint()
                .endDevices().endSpec().build();
    }

    /** {@code count} alike NVIDIA GPUs named gpu-0… */
    public static List<Device> nvidiaGpus(int count, String product, String architecture, String computeCapability, String memory) {
        var devices = new ArrayList<Device>();
        for (int i = 0; i < count; i++) {
            devices.add(nvidiaGpu("gpu-" + i, product, architecture, computeCapability, memory));
        }
        return devices;
    }

    public static DeviceAttribute text(String value) {
        return new DeviceAttributeBuilder().withString(value).build();
    }

    public static DeviceAttribute version(String value) {
        return new DeviceAttributeBuilder().withVersion(value).build();
    }

    /** A slice of a pool named after the node, as NVIDIA's driver publishes it. */
    public static ResourceSlice slice(String node, String driver, long generation, long sliceCount, List<Device> devices) {
        return slice(node + "-" + driver + "-" + generation + "-" + devices.size(), node, driver, node, generation, sliceCount, devices);
    }

    public static ResourceSlice slice(String name, String node, String driver, String pool, long generation, long sliceCount, List<Device> devices) {
        return new ResourceSliceBuilder().withMetadata(new ObjectMetaBuilder().withName(name).build()).withNewSpec()
                .withNodeName(node).withDriver(driver).withNewPool().withName(pool).withGeneration(generation)
                .withResourceSliceCount(sliceCount).endPool().withDevices(devices).endSpec().build();
    }

    public static DeviceSelector cel(String expression) {
        return new DeviceSelectorBuilder().withCel(new CELDeviceSelectorBuilder().withExpression(expression).build()).build();
    }

    public static DeviceClass deviceClass(String name, String extendedResourceName, String... expressions) {
        return new DeviceClassBuilder().withMetadata(new ObjectMetaBuilder().withName(name).build()).withNewSpec()
                .withExtendedResourceName(extendedResourceName)
                .withSelectors(java.util.Arrays.stream(expressions).map(TestDra::cel).toList()).endSpec().build();
    }

    /** NVIDIA's class of whole GPUs. */
    public static DeviceClass nvidiaClass() {
        return deviceClass(NVIDIA, null, NVIDIA_CLASS_SELECTOR);
    }

    /** A request for {@code count} devices of a class, with selectors. */
    public static DeviceRequest exactly(String name, String deviceClass, long count, String... expressions) {
        return new DeviceRequestBuilder().withName(name).withExactly(new ExactDeviceRequestBuilder().withDeviceClassName(deviceClass)
                .withAllocationMode("ExactCount").withCount(count)
                .withSelectors(java.util.Arrays.stream(expressions).map(TestDra::cel).toList()).build()).build();
    }

    /** A prioritized list: each alternative a class, a count and one selector ("" for none). */
    public static DeviceRequest firstAvailable(String name, String deviceClass, Object... countsAndSelectors) {
        var builder = new DeviceRequestBuilder().withName(name);
        for (int i = 0; i < countsAndSelectors.length; i += 2) {
            var sub = new DeviceSubRequestBuilder().withName("alt-" + i / 2).withDeviceClassName(deviceClass).withAllocationMode("ExactCount")
                    .withCount(((Number) countsAndSelectors[i]).longValue());
            var expression = (String) countsAndSelectors[i + 1];
            if (!expression.isEmpty()) {
                sub.withSelectors(cel(expression));
            }
            builder.addToFirstAvailable(sub.build());
        }
        return builder.build();
    }

    public static ResourceClaim claim(String namespace, String name, DeviceRequest... requests) {
        return new ResourceClaimBuilder().withMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).withUid("claim-" + name).build())
                .withNewSpec().withNewDevices().withRequests(requests).endDevices().endSpec().build();
    }

    /** The claim allocated on {@code node} as kube-scheduler writes it: those devices of the node's pool, reserved for the pod. */
    public static ResourceClaim allocated(ResourceClaim claim, String node, String driver, String podUid, String... devices) {
        var results = java.util.Arrays.stream(devices).map(device -> new DeviceRequestAllocationResultBuilder().withRequest("gpus")
                .withDriver(driver).withPool(node).withDevice(device).build()).toList();
        var allocation = new AllocationResultBuilder().withDevices(new DeviceAllocationResultBuilder().withResults(results).build())
                .withNodeSelector(new NodeSelectorBuilder().withNodeSelectorTerms(new NodeSelectorTermBuilder().withMatchFields(
                        new NodeSelectorRequirementBuilder().withKey("metadata.name").withOperator("In").withValues(node).build()).build()).build())
                .withAllocationTimestamp("2026-01-01T00:00:00Z").build();
        var status = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder().withAllocation(allocation);
        if (podUid != null) {
            status.withReservedFor(new ResourceClaimConsumerReferenceBuilder().withResource("pods").withName("pod-" + podUid).withUid(podUid).build());
        }
        return new ResourceClaimBuilder(claim).withStatus(status.build()).build();
    }

    /** Claims and classes held in maps. */
    public record Lookup(Map<String, ResourceClaim> claims, Map<String, DeviceClass> classes) implements DraLookup {

        public static Lookup of(List<ResourceClaim> claims, List<DeviceClass> classes) {
            var byName = new LinkedHashMap<String, ResourceClaim>();
            claims.forEach(claim -> byName.put(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName(), claim));
            var classByName = new LinkedHashMap<String, DeviceClass>();
            classes.forEach(one -> classByName.put(one.getMetadata().getName(), one));
            return new Lookup(byName, classByName);
        }

        @Override
        public ResourceClaim claim(String namespace, String name) {
            return claims.get(namespace + "/" + name);
        }

        @Override
        public DeviceClass deviceClass(String name) {
            return classes.get(name);
        }

        @Override
        public DeviceClass extendedResourceClass(String resourceName) {
            return classes.values().stream().filter(one -> resourceName.equals(one.getSpec().getExtendedResourceName())).findFirst().orElse(null);
        }
    }
}
