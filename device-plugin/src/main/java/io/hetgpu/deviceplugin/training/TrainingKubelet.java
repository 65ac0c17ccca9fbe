package io.hetgpu.deviceplugin.training;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesRequest;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResourcesListerGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.kubelet.KubeletDevices;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A kubelet for the AOT training run, over the same Unix sockets: it takes the plugin's registration and, as kubelet
 * does, dials the plugin back and opens ListAndWatch; it lists no pods over PodResources. So the training run goes
 * through the gRPC a pod goes through at start, and the cache holds its classes.
 */
public final class TrainingKubelet implements AutoCloseable {

    private final UnixSocketTransport transport = new UnixSocketTransport();
    private final List<ManagedChannel> pluginChannels = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> registered = new CompletableFuture<>();
    private final Server registration;
    private final Server podResources;

    private TrainingKubelet(Path folder, Path podResourcesSocket) throws IOException {
        registration = transport.serve(folder.resolve(KubeletDevices.KUBELET_SOCKET), new RegistrationGrpc.RegistrationImplBase() {
            @Override
            public void register(RegisterRequest request, StreamObserver<Empty> response) {
                pluginChannels.add(watchDevices(transport, folder.resolve(request.getEndpoint()),
                        devices -> registered.complete(null)));
                response.onNext(Empty.getDefaultInstance());
                response.onCompleted();
            }
        });
        podResources = transport.serve(podResourcesSocket, new PodResourcesListerGrpc.PodResourcesListerImplBase() {
            @Override
            public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
                response.onNext(ListPodResourcesResponse.getDefaultInstance());
                response.onCompleted();
            }
        });
    }

    /**
     * What kubelet does with a registration: dials the plugin back at {@code endpoint} and opens ListAndWatch, outside
     * the Register call's context (which is cancelled as soon as Register returns), each device list to {@code lists}.
     *
     * @return the channel to the plugin, for the caller to shut down
     */
    public static ManagedChannel watchDevices(UnixSocketTransport transport, Path endpoint, Consumer<ListAndWatchResponse> lists) {
        var channel = transport.connect(endpoint);
        Context.ROOT.run(() -> DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(ListAndWatchResponse devices) {
                lists.accept(devices);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        }));
        return channel;
    }

    /**
     * Completes once a plugin has registered and, dialled back, sent its first device list: the plugin has gone through
     * the registration's gRPC, its side of ListAndWatch included.
     */
    CompletableFuture<Void> registered() {
        return registered.copy();
    }

    /** Serving Registration in {@code folder} and PodResources at {@code podResourcesSocket}. */
    static TrainingKubelet started(Path folder, Path podResourcesSocket) throws IOException {
        return new TrainingKubelet(folder, podResourcesSocket);
    }

    @Override
    public void close() {
        pluginChannels.forEach(ManagedChannel::shutdownNow);
        registration.shutdownNow();
        podResources.shutdownNow();
        transport.close();
    }
}
