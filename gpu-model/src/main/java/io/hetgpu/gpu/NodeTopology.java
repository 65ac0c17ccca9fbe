package io.hetgpu.gpu;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A node's GPUs and every link between them. The device list is ordered by NVML index and position
 * {@code i} in it is row {@code i} of the link matrix. Topology does not change while a node runs;
 * only device health does, through {@link #withHealth}.
 *
 * @param driverVersion     the NVIDIA driver version, e.g. {@code 535.104.05} ("simulated" for profiles)
 * @param cudaDriverVersion the CUDA version the driver supports, e.g. {@code 12.2}
 */
public record NodeTopology(String driverVersion, String cudaDriverVersion, List<GpuDevice> devices, LinkMatrix links) {

    public NodeTopology {
        Objects.requireNonNull(driverVersion, "driverVersion");
        Objects.requireNonNull(cudaDriverVersion, "cudaDriverVersion");
        devices = List.copyOf(devices);
        Objects.requireNonNull(links, "links");
        if (links.size() != devices.size()) {
            throw new IllegalArgumentException("link matrix is " + links.size() + "x" + links.size()
                    + " but there are " + devices.size() + " devices");
        }
        var uuids = new HashMap<String, Integer>();
        for (int i = 0; i < devices.size(); i++) {
            var device = devices.get(i);
            if (i > 0 && device.index() <= devices.get(i - 1).index()) {
                throw new IllegalArgumentException("devices must be ordered by index without repeats: index "
                        + device.index() + " follows " + devices.get(i - 1).index());
            }
            var previous = uuids.put(device.uuid(), i);
            if (previous != null) {
                throw new IllegalArgumentException("uuid " + device.uuid() + " appears twice (positions " + previous + " and " + i + ")");
            }
        }
    }

    public int size() {
        return devices.size();
    }

    public GpuDevice device(int position) {
        return devices.get(position);
    }

    /** Position of the device with this UUID, at the boundary where kubelet's device IDs come in. */
    public Optional<Integer> positionOf(String uuid) {
        for (int i = 0; i < devices.size(); i++) {
            if (devices.get(i).uuid().equals(uuid)) {
                return Optional.of(i);
            }
        }
        return Optional.empty();
    }

    public boolean hasNvlink() {
        for (int i = 0; i < size(); i++) {
            for (int j = i + 1; j < size(); j++) {
                if (links.isNvlink(i, j)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The same topology with some devices' health changed; UUIDs not on this node are ignored. */
    public NodeTopology withHealth(Map<String, DeviceHealth> healthByUuid) {
        var updated = new ArrayList<GpuDevice>(devices.size());
        for (var device : devices) {
            updated.add(device.withHealth(healthByUuid.getOrDefault(device.uuid(), device.health())));
        }
        return new NodeTopology(driverVersion, cudaDriverVersion, updated, links);
    }
}
