package io.hetgpu.deviceplugin.pods;

import io.hetgpu.gpu.tier.CardRequirements;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A pod bound to a node, as far as the bind handshake needs it: plain values, read from the API server by
 * {@link BoundPodWatch}.
 *
 * @param uid             tells a pod from a later one of the same name
 * @param nodeName        {@code spec.nodeName}
 * @param assignment      the {@code hetgpu.io/gpu-devices} annotation's text, as written (unread)
 * @param gpuRequests     the GPUs each of its (regular) containers requests, in spec order, containers without GPUs
 *                        left out: kubelet allocates container by container, in that order
 * @param pastAdmission   kubelet has admitted the pod (it reported container statuses or a running phase), or it is finished or being deleted:
 *                        either way kubelet will not allocate for it again
 * @param cards           what it asks of its cards ({@code hetgpu.io/gpu-models}, …): honoured when it has no assignment
 */
public record BoundPod(String namespace, String name, String uid, String nodeName, Optional<String> assignment,
                       List<Integer> gpuRequests, boolean pastAdmission, CardRequirements cards) {

    /** A pod that asks nothing particular of its cards. */
    public BoundPod(String namespace, String name, String uid, String nodeName, Optional<String> assignment,
                    List<Integer> gpuRequests, boolean pastAdmission) {
        this(namespace, name, uid, nodeName, assignment, gpuRequests, pastAdmission, CardRequirements.ANY);
    }

    public BoundPod {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(assignment, "assignment");
        Objects.requireNonNull(cards, "cards");
        gpuRequests = List.copyOf(gpuRequests);
    }

    /** {@code namespace/name}, as logs and kubelet's PodResources name a pod. */
    public String key() {
        return namespace + "/" + name;
    }
}
