package io.hetgpu.testcluster.kubelet;

import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerAllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.Device;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginOptions;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerRequest;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerResponse;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.kubelet.KubeletDevices;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A device plugin that is not hetgpu's, as NVIDIA's is to kubelet: it registers the GPU resource with
 * {@code count} devices, streams them healthy, and on Allocate names them in {@code NVIDIA_VISIBLE_DEVICES}.
 * It writes nothing on the Node (no hetgpu inventory, no free list) and offers no preferred allocation.
 * GPU Feature Discovery's labels, where a test cluster node has them, are written by the cluster beside it.
 */
public final class PlainDevicePlugin implements AutoCloseable {

    private static final String SOCKET = "nvidia-gpu.sock";

    private final List<String> deviceIds;
    private final String resourceName;
    private final KubeletFolders folders;
    private final UnixSocketTransport transport = new UnixSocketTransport();
    private final List<StreamObserver<ListAndWatchResponse>> watchers = new CopyOnWriteArrayList<>();
    private Server server;

    /** @param uuids the devices' IDs (NVIDIA's plugin uses the GPUs' UUIDs) */
    public PlainDevicePlugin(List<String> uuids, String resourceName, KubeletFolders folders) {
        this.deviceIds = List.copyOf(uuids);
        this.resourceName = resourceName;
        this.folders = folders;
    }

    /** Serves on its socket and registers with kubelet. */
    public PlainDevicePlugin start() throws IOException {
        server = transport.serve(folders.devicePlugins().resolve(SOCKET), new Service());
        var kubelet = transport.connect(folders.devicePlugins().resolve(KubeletDevices.KUBELET_SOCKET));
        try {
            RegistrationGrpc.newBlockingStub(kubelet).withDeadlineAfter(10, TimeUnit.SECONDS).register(RegisterRequest.newBuilder()
                    .setVersion(KubeletDevices.VERSION).setEndpoint(SOCKET).setResourceName(resourceName)
                    .setOptions(DevicePluginOptions.getDefaultInstance()).build());
        } finally {
            kubelet.shutdownNow();
        }
        return this;
    }

    private ListAndWatchResponse devices() {
        var list = ListAndWatchResponse.newBuilder();
        deviceIds.forEach(id -> list.addDevices(Device.newBuilder().setID(id).setHealth(KubeletDevices.HEALTHY)));
        return list.build();
    }

    private final class Service extends DevicePluginGrpc.DevicePluginImplBase {

        @Override
        public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
            response.onNext(DevicePluginOptions.getDefaultInstance());
            response.onCompleted();
        }

        @Override
        public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
            // The devices never change; the stream stays open as kubelet expects.
            watchers.add(response);
            response.onNext(devices());
        }

        @Override
        public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
            var answer = AllocateResponse.newBuilder();
            for (var container : request.getContainerRequestsList()) {
                answer.addContainerResponses(ContainerAllocateResponse.newBuilder()
                        .putEnvs("NVIDIA_VISIBLE_DEVICES", String.join(",", container.getDevicesIdsList())));
            }
            response.onNext(answer.build());
            response.onCompleted();
        }

        @Override
        public void preStartContainer(PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> response) {
            response.onNext(PreStartContainerResponse.getDefaultInstance());
            response.onCompleted();
        }
    }

    @Override
    public void close() throws InterruptedException {
        watchers.forEach(watcher -> {
            try {
                watcher.onCompleted();
            } catch (RuntimeException e) {
                // Already cancelled by kubelet's side.
            }
        });
        if (server != null) {
            server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        transport.close();
    }
}
