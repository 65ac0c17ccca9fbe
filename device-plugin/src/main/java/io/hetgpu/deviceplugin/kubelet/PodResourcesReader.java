package io.hetgpu.deviceplugin.kubelet;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesRequest;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResourcesListerGrpc;

import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Reads which devices running pods hold from kubelet's PodResources API v1. The channel reconnects by
 * itself after a kubelet restart: the socket path stays the same.
 */
public final class PodResourcesReader implements AutoCloseable {

    private final ManagedChannel channel;
    private final PodResourcesListerGrpc.PodResourcesListerBlockingStub lister;

    public PodResourcesReader(UnixSocketTransport transport, Path socket) {
        this.channel = transport.connect(socket);
        this.lister = PodResourcesListerGrpc.newBlockingStub(channel);
    }

    /** Device IDs of {@code resourceName} that any container holds; throws {@link io.grpc.StatusRuntimeException} when kubelet does not answer. */
    public Set<String> heldDevices(String resourceName) {
        try {
            var response = lister.withDeadlineAfter(2, TimeUnit.SECONDS).list(ListPodResourcesRequest.getDefaultInstance());
            return heldDevices(response, resourceName);
        } catch (StatusRuntimeException e) {
            // gRPC's reconnect backoff grows to two minutes while kubelet is away; our own poll is the pace.
            channel.resetConnectBackoff();
            throw e;
        }
    }

    /** The pods ({@code namespace/name}) whose containers hold devices of {@code resourceName}; throws like {@link #heldDevices(String)}. */
    public Set<String> podsHolding(String resourceName) {
        try {
            var response = lister.withDeadlineAfter(2, TimeUnit.SECONDS).list(ListPodResourcesRequest.getDefaultInstance());
            return podsHolding(response, resourceName);
        } catch (StatusRuntimeException e) {
            channel.resetConnectBackoff();
            throw e;
        }
    }

    static Set<String> podsHolding(ListPodResourcesResponse response, String resourceName) {
        var pods = new TreeSet<String>();
        for (var pod : response.getPodResourcesList()) {
            boolean holds = pod.getContainersList().stream().flatMap(c -> c.getDevicesList().stream())
                    .anyMatch(d -> d.getResourceName().equals(resourceName) && d.getDeviceIdsCount() > 0);
            if (holds) {
                pods.add(pod.getNamespace() + "/" + pod.getName());
            }
        }
        return pods;
    }

    static Set<String> heldDevices(ListPodResourcesResponse response, String resourceName) {
        var held = new TreeSet<String>();
        for (var pod : response.getPodResourcesList()) {
            for (var container : pod.getContainersList()) {
                for (var devices : container.getDevicesList()) {
                    if (devices.getResourceName().equals(resourceName)) {
                        held.addAll(devices.getDeviceIdsList());
                    }
                }
            }
        }
        return held;
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
