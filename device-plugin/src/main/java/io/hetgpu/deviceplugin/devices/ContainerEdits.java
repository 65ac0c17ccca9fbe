package io.hetgpu.deviceplugin.devices;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What kubelet must add to a container so that it sees exactly the GPUs it was given (the content of
 * one {@code ContainerAllocateResponse}). Like NVIDIA's plugin, hetgpu hands over device IDs and leaves
 * device nodes, driver libraries and cgroup rules to the NVIDIA container runtime or to CDI, which
 * know the driver's file layout; it does not pass {@code /dev/nvidia*} specs itself.
 *
 * @param envs       environment variables
 * @param cdiDevices fully qualified CDI device names
 */
public record ContainerEdits(Map<String, String> envs, List<String> cdiDevices) {

    public static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
    public static final String CDI_KIND = "nvidia.com/gpu";

    public ContainerEdits {
        envs = Map.copyOf(envs);
        cdiDevices = List.copyOf(cdiDevices);
    }

    public static ContainerEdits forDevices(List<String> uuids, Set<DeviceListStrategy> strategies) {
        var envs = new TreeMap<String, String>();
        if (strategies.contains(DeviceListStrategy.ENVVAR)) {
            envs.put(VISIBLE_DEVICES, String.join(",", uuids));
        }
        var cdi = strategies.contains(DeviceListStrategy.CDI_CRI)
                ? uuids.stream().map(uuid -> CDI_KIND + "=" + uuid).toList()
                : List.<String>of();
        return new ContainerEdits(envs, cdi);
    }
}
