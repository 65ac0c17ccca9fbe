package io.hetgpu.deviceplugin.kubelet;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesRequest;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResourcesListerGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.training.TrainingKubelet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Plays kubelet over real Unix sockets with the same protobufs: serves Registration at
 * {@code <folder>/kubelet.sock} and, like kubelet, answers a registration by dialling the plugin's socket
 * and opening ListAndWatch; serves PodResources v1 at its own socket with a list the test sets.
 */
public final class KubeletStandIn implements AutoCloseable {

    private final UnixSocketTransport transport = new UnixSocketTransport();
    private final Path folder;
    private final Path podResourcesSocket;
    private final BlockingQueue<RegisterRequest> registrations = new LinkedBlockingQueue<>();
    private final List<ListAndWatchResponse> deviceLists = new CopyOnWriteArrayList<>();
    private final List<ManagedChannel> pluginChannels = new CopyOnWriteArrayList<>();
    private final AtomicReference<ListPodResourcesResponse> podResources =
            new AtomicReference<>(ListPodResourcesResponse.getDefaultInstance());
    private final AtomicInteger refusalsLeft = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private volatile Status refusal = Status.UNAVAILABLE;
    private Server registration;
    private Server podResourcesServer;
    private volatile ManagedChannel pluginChannel;

    public KubeletStandIn(Path folder, Path podResourcesSocket) {
        this.folder = folder;
        this.podResourcesSocket = podResourcesSocket;
    }

    public KubeletStandIn start() throws IOException {
        registration = transport.serve(folder.resolve(KubeletDevices.KUBELET_SOCKET), new RegistrationGrpc.RegistrationImplBase() {
            @Override
            public void register(RegisterRequest request, StreamObserver<Empty> response) {
                if (refusalsLeft.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
                    refused.incrementAndGet();
                    response.onError(refusal.asRuntimeException());
                    return;
                }
                registrations.add(request);
                var channel = TrainingKubelet.watchDevices(transport, folder.resolve(request.getEndpoint()), deviceLists::add);
                pluginChannels.add(channel);
                pluginChannel = channel;
                response.onNext(Empty.getDefaultInstance());
                response.onCompleted();
            }
        });
        if (podResourcesServer == null) {
            podResourcesServer = transport.serve(podResourcesSocket, new PodResourcesListerGrpc.PodResourcesListerImplBase() {
                @Override
                public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
                    response.onNext(podResources.get());
                    response.onCompleted();
                }
            });
        }
        return this;
    }

    /** What kubelet does when it restarts: stop, delete every socket in the folder, start again. */
    public void restart() throws IOException, InterruptedException {
        stopRegistration();
        try (var files = Files.list(folder)) {
            for (var file : files.toList()) {
                Files.deleteIfExists(file);
            }
        }
        start();
    }

    public void stopRegistration() throws InterruptedException, IOException {
        // Lets a Register call in flight finish, as a kubelet that answered before it stopped would have.
        registration.shutdown().awaitTermination(2, TimeUnit.SECONDS);
        registration.shutdownNow();
        Files.deleteIfExists(folder.resolve(KubeletDevices.KUBELET_SOCKET)) ;
    }

    /** Refuses the next {@code count} registrations with {@code status}, as a kubelet still starting up does. */
    public KubeletStandIn refuseRegistrations(int count, Status status) {
        refusal = status;
        refusalsLeft.set(count);
        return this;
    }

    public int refusedRegistrations() {
        return refused.get();
    }

    public RegisterRequest nextRegistration() throws InterruptedException {
        return registrationWithin(Duration.ofSeconds(10)).orElseThrow(() -> new AssertionError("no registration within 10 s"));
    }

    /** The next Register call, or empty when none comes within {@code time}. */
    public Optional<RegisterRequest> registrationWithin(Duration time) throws InterruptedException {
        return Optional.ofNullable(registrations.poll(time.toNanos(), TimeUnit.NANOSECONDS));
    }

    public int pendingRegistrations() {
        return registrations.size();
    }

    /** Every list ListAndWatch streamed so far, oldest first. */
    public List<ListAndWatchResponse> deviceLists() {
        return deviceLists;
    }

    /** A stub on the plugin's socket, as kubelet would call it (after a registration). */
    public DevicePluginGrpc.DevicePluginBlockingStub plugin() {
        return DevicePluginGrpc.newBlockingStub(pluginChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    public void setPodResources(ListPodResourcesResponse response) {
        podResources.set(response);
    }

    @Override
    public void close() throws InterruptedException {
        pluginChannels.forEach(ManagedChannel::shutdownNow);
        if (registration != null) {
            registration.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        if (podResourcesServer != null) {
            podResourcesServer.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        transport.close();
    }
}
