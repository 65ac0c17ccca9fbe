package io.hetgpu.deviceplugin.pods;

import io.hetgpu.gpu.inventory.DeviceAssignment;

import java.util.List;

/**
 * A pod with a valid assignment for this node whose containers kubelet has not all been given GPUs yet.
 * The assignment's devices are handed out container by container, in order: the first container that
 * requests GPUs gets the first {@code gpuRequests[0]} devices, the next the following ones.
 *
 * @param containersAllocated how many of {@code gpuRequests} kubelet has allocated so far
 */
public record PendingAssignment(String namespace, String name, String uid, DeviceAssignment assignment,
                                List<Integer> gpuRequests, int containersAllocated) {

    public PendingAssignment {
        gpuRequests = List.copyOf(gpuRequests);
        if (containersAllocated < 0 || containersAllocated >= gpuRequests.size()) {
            throw new IllegalArgumentException("containersAllocated: expected 0.." + (gpuRequests.size() - 1)
                    + ", got " + containersAllocated);
        }
    }

    public String key() {
        return namespace + "/" + name;
    }

    /** How many GPUs kubelet asks for when it allocates this pod's next container. */
    public int nextSize() {
        return gpuRequests.get(containersAllocated);
    }

    /** The devices the extender chose for the next container, in the order the container sees them. */
    public List<String> nextDevices() {
        int from = gpuRequests.subList(0, containersAllocated).stream().mapToInt(Integer::intValue).sum();
        return assignment.devices().subList(from, from + nextSize());
    }

    /** Whether the next container is its last one with GPUs. */
    public boolean lastContainer() {
        return containersAllocated == gpuRequests.size() - 1;
    }

    public PendingAssignment nextContainer() {
        return new PendingAssignment(namespace, name, uid, assignment, gpuRequests, containersAllocated + 1);
    }
}
