package io.hetgpu.deviceplugin.kubelet;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.api.v1beta1.RegistrationGrpc;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Serves the DevicePlugin service on a socket in kubelet's device-plugin folder and keeps it registered.
 *
 * <p>kubelet deletes every socket in that folder when it starts, then creates its own {@code kubelet.sock}.
 * The folder is watched (inotify through {@link WatchService}); when our socket disappears a fresh
 * server is bound, and whenever the running kubelet is not the one we registered with (told apart by
 * the inode of {@code kubelet.sock}) we register again. When kubelet is not there, registration is
 * retried with exponential backoff, and the appearance of {@code kubelet.sock} cuts the wait short.
 * Every state change happens on one thread, and is logged once.
 */
public final class DevicePluginEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DevicePluginEndpoint.class);

    static final Duration FIRST_RETRY = Duration.ofMillis(100);
    static final Duration MAX_RETRY = Duration.ofSeconds(10);
    static final Duration REGISTER_DEADLINE = Duration.ofSeconds(5);

    public enum State { STARTING, WAITING_FOR_KUBELET, REGISTERED, STOPPED }

    private final UnixSocketTransport transport;
    private final Path folder;
    private final Path socket;
    private final Path kubeletSocket;
    private final String resourceName;
    private final BindableService service;
    private final PluginMetrics metrics;
    private final ScheduledExecutorService executor;

    private WatchService watchService;
    private Thread watcher;

    // Confined to the executor thread (and to start/close, which run when it is idle).
    private Server server;
    private Object registeredWith;
    private Duration retryDelay = FIRST_RETRY;
    private ScheduledFuture<?> retry;
    private volatile State state = State.STARTING;

    public DevicePluginEndpoint(UnixSocketTransport transport, Path folder, String resourceName,
                                BindableService service, PluginMetrics metrics) {
        this.transport = transport;
        this.folder = folder;
        this.socket = folder.resolve(socketNameFor(resourceName));
        this.kubeletSocket = folder.resolve(KubeletDevices.KUBELET_SOCKET);
        this.resourceName = resourceName;
        this.service = service;
        this.metrics = metrics;
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            var thread = new Thread(runnable, "device-plugin-endpoint");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Our socket's file name: {@code nvidia.com/gpu} serves at {@code hetgpu-nvidia.com_gpu.sock}. */
    public static String socketNameFor(String resourceName) {
        return "hetgpu-" + resourceName.replaceAll("[^A-Za-z0-9.-]", "_") + ".sock";
    }

    public Path socket() {
        return socket;
    }

    public State state() {
        return state;
    }

    /** Binds the socket, starts watching the folder and makes the first registration attempt before returning. */
    public void start() throws IOException {
        if (!Files.isDirectory(folder)) {
            throw new IOException("device-plugin folder " + folder + " does not exist (is it mounted from the host?)");
        }
        watchService = folder.getFileSystem().newWatchService();
        folder.register(watchService, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
        server = transport.serve(socket, service);
        log.info("Serving the device plugin API for {} at {}", resourceName, socket);
        watcher = Thread.ofPlatform().daemon().name("device-plugin-folder-watch").start(this::watchFolder);
        try {
            executor.submit(this::reconcile).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IOException("first registration attempt failed: " + e.getCause(), e.getCause());
        }
    }

    private void watchFolder() {
        while (true) {
            try {
                var key = watchService.take();
                boolean relevant = false;
                for (var event : key.pollEvents()) {
                    relevant |= event.kind() == StandardWatchEventKinds.OVERFLOW
                            || socket.getFileName().equals(event.context())
                            || kubeletSocket.getFileName().equals(event.context());
                }
                if (relevant) {
                    executor.execute(this::reconcile);
                }
                if (!key.reset()) {
                    log.error("Device-plugin folder {} is gone; kubelet restarts will not be noticed", folder);
                    return;
                }
            } catch (InterruptedException | ClosedWatchServiceException | RejectedExecutionException e) {
                return; // closing
            }
        }
    }

    /** Brings the endpoint to "serving and registered with the running kubelet", as far as it can now. */
    private void reconcile() {
        if (state == State.STOPPED) {
            return;
        }
        if (!Files.exists(socket)) {
            log.info("Socket {} was removed, kubelet restarted: serving a fresh one", socket);
            registeredWith = null;
            try {
                restartServer();
            } catch (IOException e) {
                waitForKubelet("cannot serve at " + socket + ": " + e.getMessage());
                return;
            }
        }
        var kubelet = fileKey(kubeletSocket);
        if (kubelet == null) {
            waitForKubelet("kubelet socket " + kubeletSocket + " does not exist yet");
        } else if (!kubelet.equals(registeredWith)) {
            register(kubelet);
        }
    }

    private void restartServer() throws IOException {
        server.shutdownNow();
        try {
            server.awaitTermination(2, TimeUnit.SECONDS); // closing unlinks the old path: finish before binding it again
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server = transport.serve(socket, service);
    }

    private void register(Object kubelet) {
        var request = RegisterRequest.newBuilder()
                .setVersion(KubeletDevices.VERSION)
                .setEndpoint(socket.getFileName().toString())
                .setResourceName(resourceName)
                .setOptions(DevicePluginService.OPTIONS)
                .build();
        var channel = transport.connect(kubeletSocket);
        try {
            RegistrationGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .register(request);
            registeredWith = kubelet;
            retryDelay = FIRST_RETRY;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            metrics.registered();
            moveTo(State.REGISTERED, "Registered " + resourceName + " with kubelet at " + kubeletSocket);
        } catch (StatusRuntimeException e) {
            waitForKubelet("kubelet did not accept the registration: " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null ? "" : " " + e.getStatus().getDescription()));
        } finally {
            channel.shutdownNow();
        }
    }

    private void waitForKubelet(String reason) {
        moveTo(State.WAITING_FOR_KUBELET, "Waiting for kubelet (" + reason + "); retrying with backoff up to "
                + MAX_RETRY.toSeconds() + " s and whenever kubelet.sock appears");
        if (retry == null || retry.isDone()) {
            retry = executor.schedule(this::reconcile, retryDelay.toMillis(), TimeUnit.MILLISECONDS);
            retryDelay = retryDelay.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : retryDelay.multipliedBy(2);
        }
    }

    private void moveTo(State next, String message) {
        if (state != next) {
            state = next;
            if (next == State.WAITING_FOR_KUBELET) {
                log.warn(message);
            } else {
                log.info(message);
            }
        }
    }

    /** The file's identity (device and inode), which tells a restarted kubelet's socket from the old one. */
    private static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null; // not there (yet): kubelet is not running
        }
    }

    /** Stops serving and removes the socket, so kubelet marks the devices gone at once. */
    @Override
    public void close() {
        if (state == State.STOPPED) {
            return;
        }
        state = State.STOPPED;
        if (watcher != null) {
            watcher.interrupt();
        }
        try {
            if (watchService != null) {
                watchService.close();
            }
        } catch (IOException e) {
            log.debug("closing the folder watch: {}", e.toString());
        }
        executor.shutdownNow();
        try {
            executor.awaitTermination(REGISTER_DEADLINE.toSeconds(), TimeUnit.SECONDS);
            if (server != null) {
                server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(socket);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.warn("Could not remove {}: {}", socket, e.getMessage());
        }
        log.info("Stopped serving {} at {}", resourceName, socket);
    }
}
