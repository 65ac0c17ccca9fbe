package io.hetgpu.gpu.profile;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A machine's GPUs and links as a profile describes them (format: {@code profiles/README.md}), ready
 * to stand in for any number of nodes of that kind. Read one with {@link ProfileLoader}.
 *
 * @param name          the profile's name, e.g. {@code dgx1-v100}
 * @param description   one line for people, may be empty
 * @param driverVersion the driver version the simulated nodes report
 * @param cudaVersion   the CUDA version that driver supports
 * @param devices       the GPUs in NVML index order
 * @param links         the link matrix, row {@code i} for {@code devices.get(i)}
 */
public record MachineProfile(String name, String description, String driverVersion, String cudaVersion,
                             List<ProfileDevice> devices, LinkMatrix links) {

    public MachineProfile {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(driverVersion, "driverVersion");
        Objects.requireNonNull(cudaVersion, "cudaVersion");
        devices = List.copyOf(devices);
        if (links.size() != devices.size()) {
            throw new IllegalArgumentException("link matrix is " + links.size() + "x" + links.size()
                    + " but there are " + devices.size() + " devices");
        }
    }

    public int size() {
        return devices.size();
    }

    /**
     * The topology of one simulated node of this kind, every device healthy. UUIDs are derived from the
     * profile name, the node name and the index, so each node has its own and keeps them across restarts.
     */
    public NodeTopology topology(String nodeName) {
        if (nodeName == null || nodeName.isBlank()) {
            throw new IllegalArgumentException("node name must not be empty");
        }
        var gpus = new ArrayList<GpuDevice>(devices.size());
        for (int index = 0; index < devices.size(); index++) {
            var device = devices.get(index);
            var cc = device.computeCapability();
            gpus.add(new GpuDevice(uuid(nodeName, index), index, device.product(), CardModel.fromProductName(device.product()),
                    GpuArchitecture.of(cc), cc, device.memoryMiB(), device.pciBusId(), device.numaNode(), DeviceHealth.HEALTHY));
        }
        return new NodeTopology(driverVersion, cudaVersion, gpus, links);
    }

    /** {@code GPU-} and a name-based UUID, the shape NVML gives real devices. */
    private String uuid(String nodeName, int index) {
        var seed = "hetgpu-simulated/" + name + "/" + nodeName + "/" + index;
        return "GPU-" + UUID.nameUUIDFromBytes(seed.getBytes(StandardCharsets.UTF_8));
    }
}
