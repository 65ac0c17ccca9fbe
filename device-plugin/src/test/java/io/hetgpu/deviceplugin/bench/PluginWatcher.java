package io.hetgpu.deviceplugin.bench;

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
import java.util.concurrent.TimeUnit;

/**
 * kubelet's plugin watcher, for the benchmark: it looks for the driver's registration socket every 2 ms (kubelet is told of
 * it by inotify), then asks GetInfo and confirms the registration, as kubelet does.
 */
final class PluginWatcher {

    private PluginWatcher() {
    }

    /**
     * GetInfo, asked again while the socket does not answer yet: it appears as the plugin binds it, a moment before the
     * plugin listens on it (seen as UNAVAILABLE once in a few runs).
     */
    private static PluginInfo getInfo(RegistrationGrpc.RegistrationBlockingStub registration, long deadline) throws InterruptedException {
        while (true) {
            try {
                return registration.getInfo(InfoRequest.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(2);
        }
    }

    /** Registers the plugin whose socket appears at {@code socket}; returns {@link System#nanoTime()} once it is confirmed. */
    static long register(UnixSocketTransport transport, Path socket, Process plugin, Path log, Duration time)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + time.toNanos();
        while (!Files.exists(socket)) {
            if (!plugin.isAlive() || System.nanoTime() > deadline) {
                var how = plugin.isAlive() ? "no registration socket within " + time.toSeconds() + " s"
                        : "the plugin exited with " + plugin.exitValue() + " before it registered";
                plugin.destroyForcibly().waitFor();
                var last = Files.readAllLines(log).reversed().stream().filter(line -> !line.isBlank()).findFirst().orElse("(its log is empty)");
                throw new IllegalStateException(how + ": " + last.strip() + " (" + log + ")");
            }
            Thread.sleep(2);
        }
        var channel = transport.connect(socket);
        try {
            var registration = RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(time.toMillis(), TimeUnit.MILLISECONDS);
            var info = getInfo(registration, deadline);
            registration.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
            if (info.getEndpoint().isEmpty()) {
                throw new IllegalStateException("the plugin named no DRA endpoint in GetInfo: " + info);
            }
            return System.nanoTime();
        } finally {
            channel.shutdownNow();
        }
    }
}
