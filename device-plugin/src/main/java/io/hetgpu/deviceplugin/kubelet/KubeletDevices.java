package io.hetgpu.deviceplugin.kubelet;

import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.CDIDevice;
import io.hetgpu.deviceplugin.api.v1beta1.Device;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.NUMANode;
import io.hetgpu.deviceplugin.api.v1beta1.TopologyInfo;
import io.hetgpu.deviceplugin.devices.ContainerEdits;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;

/** Translations between hetgpu's values and kubelet's v1beta1 messages. */
public final class KubeletDevices {

    /** kubelet's health strings (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/constants.go). */
    public static final String HEALTHY = "Healthy";
    public static final String UNHEALTHY = "Unhealthy";
    /** The API version kubelet expects in RegisterRequest. */
    public static final String VERSION = "v1beta1";
    /** kubelet's own socket in the device-plugin folder. */
    public static final String KUBELET_SOCKET = "kubelet.sock";

    private KubeletDevices() {
    }

    /** The device list of ListAndWatch: device ID = GPU UUID; NUMA node only when the driver knows it. */
    public static ListAndWatchResponse listOf(NodeTopology topology) {
        var response = ListAndWatchResponse.newBuilder();
        for (var device : topology.devices()) {
            response.addDevices(deviceOf(device));
        }
        return response.build();
    }

    static Device deviceOf(GpuDevice gpu) {
        var device = Device.newBuilder()
                .setID(gpu.uuid())
                .setHealth(gpu.isHealthy() ? HEALTHY : UNHEALTHY);
        if (gpu.hasNumaNode()) {
            // Without topology kubelet's Topology Manager treats the device as reachable from every NUMA node.
            device.setTopology(TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(gpu.numaNode())));
        }
        return device.build();
    }

    static ContainerAllocateResponse responseOf(ContainerEdits edits) {
        var response = ContainerAllocateResponse.newBuilder().putAllEnvs(edits.envs());
        for (var name : edits.cdiDevices()) {
            response.addCdiDevices(CDIDevice.newBuilder().setName(name));
        }
        return response.build();
    }
}
