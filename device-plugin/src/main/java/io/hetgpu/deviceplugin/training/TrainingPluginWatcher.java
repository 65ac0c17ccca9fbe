package io.hetgpu.deviceplugin.training;

import io.hetgpu.deviceplugin.api.dra.v1.Claim;
import io.hetgpu.deviceplugin.api.dra.v1.DRAPluginGrpc;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.InfoRequest;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.PluginInfo;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationGrpc;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationStatus;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * kubelet for the DRA driver's AOT training run: its plugin watcher, which finds the driver's registration socket in the
 * registry folder, asks GetInfo and confirms the registration, and its DRA client, which then prepares one claim and
 * unprepares it (the v1 DRAPlugin service, which kubelet 1.34 and later call). So the training run goes through the gRPC
 * a DRA driver in a pod goes through: at start, and as the first pod with GPUs starts and ends on its node.
 */
public final class TrainingPluginWatcher implements AutoCloseable {

    /** What kubelet's plugin watcher calls a DRA driver in GetInfo. */
    static final String DRA_PLUGIN = "DRAPlugin";
    /** The DRA service this kubelet calls. */
    static final String DRA_V1 = "v1.DRAPlugin";
    /** How often the registry folder is looked at (kubelet is told by inotify; the training run can poll). */
    private static final Duration POLL = Duration.ofMillis(20);
    /** How long one gRPC call may take an interpreter-only driver. */
    private static final Duration CALL = Duration.ofSeconds(60);

    private final UnixSocketTransport transport = new UnixSocketTransport();
    private final CompletableFuture<Path> registered = new CompletableFuture<>();
    private final CompletableFuture<Void> prepared = new CompletableFuture<>();
    private final CompletableFuture<Void> unprepared = new CompletableFuture<>();
    private final Thread watcher;
    private volatile boolean closed;

    private TrainingPluginWatcher(Path registryDir) {
        watcher = Thread.ofVirtual().name("training-plugin-watcher").start(() -> watch(registryDir));
    }

    /** Watching {@code registryDir} for a driver's {@code *-reg.sock} until closed. */
    static TrainingPluginWatcher started(Path registryDir) {
        return new TrainingPluginWatcher(registryDir);
    }

    /** Completes with the driver's DRA socket once it has registered: GetInfo answered, the registration confirmed. */
    CompletableFuture<Path> registered() {
        return registered.copy();
    }

    /**
     * Completes once the driver has prepared the claim {@link #prepareAndUnprepare} names, with its devices; completes
     * exceptionally, saying why, when it answered an error or no devices.
     */
    CompletableFuture<Void> prepared() {
        return prepared.copy();
    }

    /** Completes once the driver has unprepared the claim; exceptionally, saying why, when it answered an error. */
    CompletableFuture<Void> unprepared() {
        return unprepared.copy();
    }

    private void watch(Path registryDir) {
        try {
            var socket = registrationSocket(registryDir);
            if (socket == null) {
                return; // closed first
            }
            var channel = transport.connect(socket);
            try {
                var registration = RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS);
                var info = getInfo(registration);
                if (info == null) {
                    return; // closed first
                }
                var problem = infoProblem(info.getType(), info.getEndpoint(), info.getSupportedVersionsList());
                registration.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(problem.isEmpty())
                        .setError(problem).build());
                if (!problem.isEmpty()) {
                    registered.completeExceptionally(new TrainingStepFailed(problem));
                    return;
                }
                registered.complete(Path.of(info.getEndpoint()));
            } finally {
                channel.shutdownNow();
            }
        } catch (IOException | RuntimeException e) {
            registered.completeExceptionally(new TrainingStepFailed("registration failed: " + e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * GetInfo, asked again while the socket does not answer yet: it appears as the driver binds it, a moment before the
     * driver listens on it. Null when closed first.
     */
    private PluginInfo getInfo(RegistrationGrpc.RegistrationBlockingStub registration) throws InterruptedException {
        while (!closed) {
            try {
                return registration.getInfo(InfoRequest.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
                    throw e;
                }
            }
            Thread.sleep(POLL);
        }
        return null;
    }

    /** The first {@code *-reg.sock} to appear in {@code registryDir}; null when closed first. */
    private Path registrationSocket(Path registryDir) throws IOException, InterruptedException {
        while (!closed) {
            if (Files.isDirectory(registryDir)) {
                try (var sockets = Files.newDirectoryStream(registryDir, "*-reg.sock")) {
                    var first = sockets.iterator();
                    if (first.hasNext()) {
                        return first.next();
                    }
                }
            }
            Thread.sleep(POLL);
        }
        return null;
    }

    /**
     * Why kubelet would refuse a plugin that answered GetInfo with these, or {@code ""}: a DRA driver that serves the v1
     * DRA service at an absolute socket path.
     */
    static String infoProblem(String type, String endpoint, List<String> supportedVersions) {
        if (!DRA_PLUGIN.equals(type)) {
            return "GetInfo answered type \"" + type + "\", not " + DRA_PLUGIN;
        }
        if (endpoint.isEmpty() || !Path.of(endpoint).isAbsolute()) {
            return "GetInfo answered endpoint \"" + endpoint + "\", not an absolute socket path";
        }
        if (!supportedVersions.contains(DRA_V1)) {
            return "GetInfo answered supported versions " + supportedVersions + ", without " + DRA_V1;
        }
        return "";
    }

    /**
     * As kubelet does when a pod with claim {@code namespace/name} starts on the node and then ends: NodePrepareResources,
     * then NodeUnprepareResources, on the driver's DRA socket. Blocks until both are answered.
     */
    void prepareAndUnprepare(Path draSocket, String namespace, String name, String uid) {
        var channel = transport.connect(draSocket);
        try {
            var claim = Claim.newBuilder().setNamespace(namespace).setName(name).setUid(uid).build();
            var answer = DRAPluginGrpc.newBlockingStub(channel).withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
                    .nodePrepareResources(NodePrepareResourcesRequest.newBuilder().addClaims(claim).build()).getClaimsOrDefault(uid, null);
            var problem = answer == null ? "NodePrepareResources answered nothing for claim uid " + uid
                    : !answer.getError().isEmpty() ? "NodePrepareResources answered: " + answer.getError()
                    : answer.getDevicesCount() == 0 ? "NodePrepareResources answered no devices for claim " + namespace + "/" + name : "";
            if (!problem.isEmpty()) {
                prepared.completeExceptionally(new TrainingStepFailed(problem));
                return;
            }
            prepared.complete(null);
            var unprepare = DRAPluginGrpc.newBlockingStub(channel).withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
                    .nodeUnprepareResources(NodeUnprepareResourcesRequest.newBuilder().addClaims(claim).build()).getClaimsOrDefault(uid, null);
            if (unprepare == null || !unprepare.getError().isEmpty()) {
                unprepared.completeExceptionally(new TrainingStepFailed("NodeUnprepareResources answered: "
                        + (unprepare == null ? "nothing for claim uid " + uid : unprepare.getError())));
                return;
            }
            unprepared.complete(null);
        } catch (RuntimeException e) {
            var failed = new TrainingStepFailed("the call failed: " + e);
            prepared.completeExceptionally(failed);
            unprepared.completeExceptionally(failed);
        } finally {
            channel.shutdownNow();
        }
    }

    /** Why a step of the training did not happen, as the failure line gives it. */
    static final class TrainingStepFailed extends RuntimeException {
        TrainingStepFailed(String reason) {
            super(reason, null, false, false);
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        watcher.join(Duration.ofSeconds(5));
        transport.close();
    }
}
