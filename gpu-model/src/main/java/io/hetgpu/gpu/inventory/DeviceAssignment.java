package io.hetgpu.gpu.inventory;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The GPUs the scheduler extender chose for a pod when it bound it: the {@code hetgpu.io/gpu-devices} pod annotation,
 * the bind handshake's one shared fact. The extender writes it before it creates the Binding; the device plugin on
 * {@code node} answers kubelet's GetPreferredAllocation with {@code devices} and checks Allocate against them.
 *
 * @param node    the node the pod was bound to: an assignment for another node is stale and never followed
 * @param devices device IDs (UUIDs) in the order the container sees them
 * @param boundAt   when the extender bound the pod; kubelet admits pods in bind order, so the plugin matches the
 *                  earliest-bound pod it has not allocated yet
 * @param signature the extender's seal over the record and the pod's UID ("" when there is none): only the extender
 *                  checks it, so that a record a pod's author wrote holds no GPUs; the device plugin ignores it
 */
public record DeviceAssignment(String node, List<String> devices, Instant boundAt, String signature) {

    public DeviceAssignment {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(boundAt, "boundAt");
        Objects.requireNonNull(signature, "signature");
        devices = List.copyOf(devices);
    }

    /** An assignment without a signature. */
    public DeviceAssignment(String node, List<String> devices, Instant boundAt) {
        this(node, devices, boundAt, "");
    }

    /** The same assignment carrying {@code seal}. */
    public DeviceAssignment signed(String seal) {
        return new DeviceAssignment(node, devices, boundAt, seal);
    }
}
