package io.hetgpu.deviceplugin.kubelet;

import com.google.protobuf.Descriptors.Descriptor;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerDevices;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResourcesListerGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.Device;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginOptions;
import io.hetgpu.deviceplugin.api.v1beta1.NUMANode;
import io.hetgpu.deviceplugin.api.v1beta1.TopologyInfo;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The generated code speaks kubelet's protocol: the same gRPC paths, field numbers and bytes. */
class WireProtocolTest {

    @Test
    void grpcPathsAreKubelets() {
        assertThat(RegistrationGrpc.getRegisterMethod().getFullMethodName()).isEqualTo("v1beta1.Registration/Register");
        assertThat(DevicePluginGrpc.getListAndWatchMethod().getFullMethodName()).isEqualTo("v1beta1.DevicePlugin/ListAndWatch");
        assertThat(DevicePluginGrpc.getGetDevicePluginOptionsMethod().getFullMethodName()).isEqualTo("v1beta1.DevicePlugin/GetDevicePluginOptions");
        assertThat(DevicePluginGrpc.getGetPreferredAllocationMethod().getFullMethodName()).isEqualTo("v1beta1.DevicePlugin/GetPreferredAllocation");
        assertThat(DevicePluginGrpc.getAllocateMethod().getFullMethodName()).isEqualTo("v1beta1.DevicePlugin/Allocate");
        assertThat(DevicePluginGrpc.getPreStartContainerMethod().getFullMethodName()).isEqualTo("v1beta1.DevicePlugin/PreStartContainer");
        assertThat(PodResourcesListerGrpc.getListMethod().getFullMethodName()).isEqualTo("v1.PodResourcesLister/List");
        assertThat(PodResourcesListerGrpc.getGetAllocatableResourcesMethod().getFullMethodName()).isEqualTo("v1.PodResourcesLister/GetAllocatableResources");
        assertThat(PodResourcesListerGrpc.getGetMethod().getFullMethodName()).isEqualTo("v1.PodResourcesLister/Get");
    }

    @Test
    void fieldNumbersMatchTheUpstreamProtos() {
        assertThat(fields(RegisterRequest.getDescriptor())).containsExactly(
                Map.entry("version", 1), Map.entry("endpoint", 2), Map.entry("resource_name", 3), Map.entry("options", 4));
        assertThat(fields(DevicePluginOptions.getDescriptor())).containsExactly(
                Map.entry("pre_start_required", 1), Map.entry("get_preferred_allocation_available", 2));
        assertThat(fields(Device.getDescriptor())).containsExactly(Map.entry("ID", 1), Map.entry("health", 2), Map.entry("topology", 3));
        assertThat(fields(ContainerPreferredAllocationRequest.getDescriptor())).containsExactly(
                Map.entry("available_deviceIDs", 1), Map.entry("must_include_deviceIDs", 2), Map.entry("allocation_size", 3));
        assertThat(fields(ContainerAllocateResponse.getDescriptor())).containsExactly(Map.entry("envs", 1), Map.entry("mounts", 2),
                Map.entry("devices", 3), Map.entry("annotations", 4), Map.entry("cdi_devices", 5));
        assertThat(fields(ContainerDevices.getDescriptor())).containsExactly(
                Map.entry("resource_name", 1), Map.entry("device_ids", 2), Map.entry("topology", 3));
    }

    @Test
    void aDeviceEncodesToTheBytesKubeletDecodes() {
        var device = Device.newBuilder().setID("GPU-1").setHealth("Healthy")
                .setTopology(TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(1))).build();
        // 0a 05 "GPU-1" | 12 07 "Healthy" | 1a 04 (0a 02 (08 01)): field 1 string, field 2 string, field 3 message.
        assertThat(HexFormat.of().formatHex(device.toByteArray()))
                .isEqualTo("0a05" + hex("GPU-1") + "1207" + hex("Healthy") + "1a040a020801");
    }

    private static Map<String, Integer> fields(Descriptor descriptor) {
        var fields = new LinkedHashMap<String, Integer>();
        descriptor.getFields().forEach(field -> fields.put(field.getName(), field.getNumber()));
        return fields;
    }

    private static String hex(String text) {
        return HexFormat.of().formatHex(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
