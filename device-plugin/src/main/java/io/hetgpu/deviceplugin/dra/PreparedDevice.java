package io.hetgpu.deviceplugin.dra;

import java.util.List;

/**
 * One device of a prepared claim, as kubelet is told of it.
 *
 * @param requestNames the claim's requests the device is for, without a subrequest's name (kubelet matches containers'
 *                     claims by request)
 * @param poolName     the device's pool (this node's)
 * @param deviceName   the device's name in the pool ({@code gpu-<position>})
 * @param cdiDeviceIds the fully qualified CDI device names the container runtime injects
 */
public record PreparedDevice(List<String> requestNames, String poolName, String deviceName, List<String> cdiDeviceIds) {
    public PreparedDevice {
        requestNames = List.copyOf(requestNames);
        cdiDeviceIds = List.copyOf(cdiDeviceIds);
    }
}
