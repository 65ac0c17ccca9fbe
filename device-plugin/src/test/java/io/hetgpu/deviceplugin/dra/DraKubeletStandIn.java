package io.hetgpu.deviceplugin.dra;

import io.grpc.ManagedChannel;
import io.hetgpu.deviceplugin.api.dra.v1.Claim;
import io.hetgpu.deviceplugin.api.dra.v1.DRAPluginGrpc;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesResponse;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesResponse;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.InfoRequest;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.PluginInfo;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationGrpc;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationStatus;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * Plays kubelet's side of DRA over real Unix sockets with upstream's protobufs: the plugin watcher (the registration
 * socket found in the registry folder, GetInfo, NotifyRegistrationStatus), then the DRA services on the socket GetInfo
 * names, in the version asked for.
 */
final class DraKubeletStandIn implements AutoCloseable {

    private final UnixSocketTransport transport = new UnixSocketTransport();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final Path registryDir;
    private PluginInfo info;

    DraKubeletStandIn(Path registryDir) {
        this.registryDir = registryDir;
    }

    /** What the plugin watcher does on finding a socket: GetInfo, then says whether it took the plugin. */
    PluginInfo register(String driver, boolean accept, String error) {
        var socket = registryDir.resolve(driver + "-reg.sock");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(socket));
        var registration = RegistrationGrpc.newBlockingStub(channel(socket)).withDeadlineAfter(10, TimeUnit.SECONDS);
        info = registration.getInfo(InfoRequest.getDefaultInstance());
        registration.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(accept).setError(error).build());
        return info;
    }

    NodePrepareResourcesResponse prepare(Claim... claims) {
        return v1().nodePrepareResources(NodePrepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
    }

    NodeUnprepareResourcesResponse unprepare(Claim... claims) {
        return v1().nodeUnprepareResources(NodeUnprepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
    }

    /** The v1 service as a 1.34+ kubelet calls it. */
    DRAPluginGrpc.DRAPluginBlockingStub v1() {
        return DRAPluginGrpc.newBlockingStub(draChannel()).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** The v1beta1 service as a 1.33 kubelet calls it. */
    io.hetgpu.deviceplugin.api.dra.v1beta1.DRAPluginGrpc.DRAPluginBlockingStub v1beta1() {
        return io.hetgpu.deviceplugin.api.dra.v1beta1.DRAPluginGrpc.newBlockingStub(draChannel()).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** kubelet's health stream, version v1alpha1 as 1.34 to 1.36 open it: every message kept, and how it ended. */
    HealthWatch watchHealth() {
        var watch = new HealthWatch();
        io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DRAResourceHealthGrpc.newStub(draChannel())
                .nodeWatchResources(io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(), watch);
        return watch;
    }

    /** What a health stream brought: its messages in order, and its end (empty while open; "completed" or the status). */
    static final class HealthWatch implements io.grpc.stub.StreamObserver<io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse> {

        final List<io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse> messages = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile String end = "";

        @Override
        public void onNext(io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse message) {
            messages.add(message);
        }

        @Override
        public void onError(Throwable error) {
            end = io.grpc.Status.fromThrowable(error).toString();
        }

        @Override
        public void onCompleted() {
            end = "completed";
        }

        /** The last message's health of each device, by name ("gpu-3" → UNHEALTHY). */
        java.util.Map<String, String> latest() {
            var last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
            var health = new java.util.LinkedHashMap<String, String>();
            if (last != null) {
                last.getDevicesList().forEach(d -> health.put(d.getDevice().getDeviceName(), d.getHealth().name()));
            }
            return health;
        }
    }

    static Claim claim(String namespace, String name, String uid) {
        return Claim.newBuilder().setNamespace(namespace).setName(name).setUid(uid).build();
    }

    private ManagedChannel draChannel() {
        if (info == null) {
            throw new IllegalStateException("not registered: kubelet calls only a plugin it registered");
        }
        return channel(Path.of(info.getEndpoint()));
    }

    private synchronized ManagedChannel channel(Path socket) {
        var channel = transport.connect(socket);
        channels.add(channel);
        return channel;
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        transport.close();
    }
}
