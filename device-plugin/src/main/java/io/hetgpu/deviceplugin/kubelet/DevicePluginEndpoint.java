package io.hetgpu.deviceplugin.kubelet;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.Status;
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
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * Serves the DevicePlugin service on a socket in kubelet's device-plugin folder and keeps it registered.
 *
 * <p>kubelet deletes every socket in that folder when it starts, then creates its own {@code kubelet.sock}.
 * The folder is watched (inotify through {@link WatchService}); when our socket disappears a fresh
 * server is bound, and whenever the running kubelet is not the one we registered with (told apart by
 * the inode of {@code kubelet.sock}) we register again. Until registered — kubelet absent, refusing,
 * not answering, the folder gone or unwritable — the endpoint retries with capped exponential backoff
 * and jitter ({@link Backoff}), and the appearance of {@code kubelet.sock} cuts the wait short. Every
 * pass that does not end registered leaves exactly one retry scheduled, so retrying never stops on
 * its own. A folder deleted and created again is watched again. Every state change happens on one
 * thread; each distinct cause of failure is logged once ({@link CauseLog}), with its own reason.
 */
public final class DevicePluginEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DevicePluginEndpoint.class);

    static final Duration REGISTER_DEADLINE = Duration.ofSeconds(5);

    public enum State { STARTING, WAITING_FOR_KUBELET, REGISTERED, STOPPED }

    private final UnixSocketTransport transport;
    private final Path folder;
    private final Path socket;
    private final Path kubeletSocket;
    private final String resourceName;
    private final BindableService service;
    private final PluginMetrics metrics;
    private final Backoff backoff;
    private final ScheduledExecutorService executor;

    private WatchService watchService;
    private Thread watcher;

    // Confined to the executor thread (and to start/close, which run when it is idle).
    private final RandomGenerator jitter = RandomGenerator.getDefault();
    private final CauseLog causes;
    private WatchKey folderKey;
    private Server server;
    private Object servedKey; // the identity of the socket file we bound, to tell it from a replacement
    private Object registeredWith;
    private int failures;
    private ScheduledFuture<?> retry; // non-null exactly while a retry is scheduled and has not begun
    private volatile State state = State.STARTING;
    private volatile String waitingFor;

    public DevicePluginEndpoint(UnixSocketTransport transport, Path folder, String resourceName,
                                BindableService service, PluginMetrics metrics) {
        this(transport, folder, resourceName, service, metrics, Backoff.KUBELET);
    }

    public DevicePluginEndpoint(UnixSocketTransport transport, Path folder, String resourceName,
                                BindableService service, PluginMetrics metrics, Backoff backoff) {
        this.transport = transport;
        this.folder = folder;
        this.socket = folder.resolve(socketNameFor(resourceName));
        this.kubeletSocket = folder.resolve(KubeletDevices.KUBELET_SOCKET);
        this.resourceName = resourceName;
        this.service = service;
        this.metrics = metrics;
        this.backoff = backoff;
        this.causes = new CauseLog(cause -> log.warn("Not registered with kubelet: {}; retrying with backoff up to {} s"
                + " and whenever {} appears", cause, backoff.max().toMillis() / 1000.0, KubeletDevices.KUBELET_SOCKET));
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

    /** Why the endpoint is not registered, as last logged; empty while registered. */
    public Optional<String> waitingFor() {
        return state == State.REGISTERED ? Optional.empty() : Optional.ofNullable(waitingFor);
    }

    /** Binds the socket, starts watching the folder and makes the first registration attempt before returning. */
    public void start() throws IOException {
        if (!Files.isDirectory(folder)) {
            throw new IOException("device-plugin folder " + folder + (Files.exists(folder) ? " is not a folder" : " does not exist")
                    + " (is it mounted from the host?)");
        }
        watchService = folder.getFileSystem().newWatchService();
        folderKey = folder.register(watchService, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
        try {
            server = transport.serve(socket, service);
            servedKey = fileKey(socket);
        } catch (IOException e) {
            throw new IOException("cannot serve the device plugin API at " + socket + ": " + FailureCause.of(e), e);
        }
        log.info("Serving the device plugin API for {} at {}", resourceName, socket);
        watcher = Thread.ofPlatform().daemon().name("device-plugin-folder-watch").start(this::watchFolder);
        try {
            executor.submit(this::reconcile).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IOException("first registration attempt failed: " + FailureCause.of(e.getCause()), e.getCause());
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
                if (!key.reset()) {
                    // The folder is gone; reconcile notices, retries with backoff, and watches it again once it is back.
                    relevant = true;
                }
                if (relevant) {
                    executor.execute(this::reconcile);
                }
            } catch (InterruptedException | ClosedWatchServiceException | RejectedExecutionException e) {
                return; // closing
            }
        }
    }

    /**
     * Brings the endpoint to "serving and registered with the running kubelet", as far as it can now.
     * Every way out either registers or leaves a retry scheduled ({@link #waitForKubelet}).
     */
    private void reconcile() {
        if (state == State.STOPPED) {
            return;
        }
        try {
            if (!Files.isDirectory(folder)) {
                waitForKubelet("device-plugin folder " + folder + " does not exist");
                return;
            }
            if (folderKey == null || !folderKey.isValid()) {
                folderKey = folder.register(watchService, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
                log.info("Device-plugin folder {} is back: watching it again", folder);
            }
            if (server == null || !Objects.equals(fileKey(socket), servedKey)) {
                log.info("Socket {} is gone or replaced (kubelet restarted, or the folder was recreated): serving a fresh one", socket);
                registeredWith = null;
                try {
                    restartServer();
                } catch (IOException e) {
                    waitForKubelet("cannot serve at " + socket + ": " + FailureCause.of(e));
                    return;
                }
            }
            var kubelet = fileKey(kubeletSocket);
            if (kubelet == null) {
                waitForKubelet("kubelet socket " + kubeletSocket + " does not exist yet");
            } else if (!kubelet.equals(registeredWith)) {
                register(kubelet);
            }
        } catch (IOException e) {
            waitForKubelet("cannot watch " + folder + ": " + FailureCause.of(e));
        } catch (RuntimeException e) {
            // Whatever it was, retrying is the only way on; a daemon that stops here stays unregistered.
            waitForKubelet("unexpected failure: " + FailureCause.of(e));
        }
    }

    private void restartServer() throws IOException {
        if (server != null) {
            server.shutdownNow();
            try {
                server.awaitTermination(2, TimeUnit.SECONDS); // closing unlinks the old path: finish before binding it again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server = null;
        }
        server = transport.serve(socket, service);
        servedKey = fileKey(socket);
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
        } catch (StatusRuntimeException e) {
            waitForKubelet(refusal(e));
            return;
        } finally {
            channel.shutdownNow();
        }
        registeredWith = kubelet;
        if (retry != null) {
            retry.cancel(false);
            retry = null;
        }
        metrics.registered();
        causes.clear();
        state = State.REGISTERED;
        waitingFor = null;
        log.info("Registered {} with kubelet at {}{}", resourceName, kubeletSocket,
                failures == 0 ? "" : " after " + failures + " failed attempt" + (failures == 1 ? "" : "s"));
        failures = 0;
    }

    /** The refusal in words that stay the same from one attempt to the next, so that it is logged once. */
    private static String refusal(StatusRuntimeException e) {
        var status = e.getStatus();
        if (status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            // gRPC's own description names the milliseconds spent, different every time.
            return "kubelet did not answer the registration within " + REGISTER_DEADLINE.toSeconds() + " s";
        }
        var detail = status.getDescription() == null ? "" : " " + status.getDescription();
        var cause = status.getCause() == null ? "" : ": " + FailureCause.of(status.getCause());
        return "kubelet did not accept the registration: " + status.getCode() + detail + cause;
    }

    /** Not registered: say why (once per distinct cause) and make sure one retry is scheduled. */
    private void waitForKubelet(String cause) {
        if (state == State.STOPPED) {
            return;
        }
        registeredWith = null;
        state = State.WAITING_FOR_KUBELET;
        waitingFor = cause;
        causes.report(cause);
        if (retry == null) {
            var delay = backoff.delay(failures, jitter.nextDouble());
            failures++;
            try {
                retry = executor.schedule(this::retry, delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    }

    private void retry() {
        retry = null; // this retry has begun: whatever reconcile finds, the next wait schedules a fresh one
        reconcile();
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
            if (server == null) {
                return; // never served (the folder was missing): no socket of ours to remove, nothing to say stopped
            }
            UnixSocketTransport.stop(server, socket);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.warn("Could not remove {}: {}", socket, e.getMessage());
        }
        log.info("Stopped serving {} at {}", resourceName, socket);
    }
}
