package io.hetgpu.deviceplugin.dra;

import io.grpc.Server;
import io.hetgpu.deviceplugin.kubelet.FailureCause;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's two sockets: the DRA services (v1 and v1beta1) and the device health services (v1 and v1alpha1) at
 * {@code <plugin dir>/<driver>/dra.sock}, served first, then the Registration service at
 * {@code <registry dir>/<driver>-reg.sock}, whose appearance makes kubelet's plugin watcher register the driver. Closing
 * removes both, so kubelet drops the driver at once; its health streams are ended first, so kubelet sees them end.
 */
public final class DraEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DraEndpoint.class);

    static final String DRA_SOCKET = "dra.sock";

    private final Path draSocket;
    private final Path registrationSocket;
    private final PluginRegistration registration;
    private final HealthStreams health;
    private Server draServer;
    private Server registrationServer;

    /**
     * Serves both sockets before returning.
     *
     * @param pluginFolder the driver's own folder, {@code <--dra-plugin-dir>/<driver>}, created when missing
     * @param registryDir  kubelet's plugin registry folder, which kubelet makes
     */
    public static DraEndpoint start(UnixSocketTransport transport, Path registryDir, Path pluginFolder, String driver,
                                    ClaimPreparer preparer, HealthStreams health, DraMetrics metrics) throws IOException {
        if (!Files.isDirectory(registryDir)) {
            throw new IOException("plugin registry folder " + registryDir + (Files.exists(registryDir) ? " is not a folder" : " does not exist")
                    + " (is it mounted from the host?)");
        }
        var endpoint = new DraEndpoint(pluginFolder.resolve(DRA_SOCKET), registryDir.resolve(registrationSocketName(driver)),
                driver, health, metrics);
        try {
            endpoint.draServer = transport.serve(endpoint.draSocket, new DraServiceV1(preparer), new DraServiceV1beta1(preparer),
                    new DraHealthServiceV1(health), new DraHealthServiceV1alpha1(health));
        } catch (IOException e) {
            throw new IOException("cannot serve the DRA API at " + endpoint.draSocket + ": " + FailureCause.of(e), e);
        }
        try {
            endpoint.registrationServer = transport.serve(endpoint.registrationSocket, endpoint.registration);
        } catch (IOException e) {
            endpoint.close();
            throw new IOException("cannot serve plugin registration at " + endpoint.registrationSocket + ": " + FailureCause.of(e), e);
        }
        log.info("Serving DRA driver {} at {}, registration at {}", driver, endpoint.draSocket, endpoint.registrationSocket);
        return endpoint;
    }

    private DraEndpoint(Path draSocket, Path registrationSocket, String driver, HealthStreams health, DraMetrics metrics) {
        this.draSocket = draSocket;
        this.health = health;
        this.registrationSocket = registrationSocket;
        this.registration = new PluginRegistration(driver, draSocket, metrics);
    }

    /** {@code <driver>-reg.sock}, the name kubeletplugin of k8s.io/dynamic-resource-allocation gives it by default. */
    public static String registrationSocketName(String driver) {
        return driver + "-reg.sock";
    }

    public Path draSocket() {
        return draSocket;
    }

    public Path registrationSocket() {
        return registrationSocket;
    }

    public boolean registered() {
        return registration.notRegistered().isEmpty();
    }

    /** Why kubelet has not registered the driver (not asked yet, or refused it); empty when it has. */
    public Optional<String> notRegistered() {
        return registration.notRegistered();
    }

    /**
     * The registration socket goes first: kubelet stops sending claims before the DRA socket closes. The health streams
     * are then ended and given a moment to reach kubelet, so it sees a stream end rather than a connection cut.
     */
    @Override
    public void close() {
        stop(registrationServer, registrationSocket);
        boolean streaming = health.openStreams() > 0;
        health.close();
        if (draServer != null && streaming) { // a graceful stop lets the streams' ends out; without streams it only waits
            try {
                draServer.shutdown().awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        stop(draServer, draSocket);
    }

    private static void stop(Server server, Path socket) {
        if (server == null) {
            return;
        }
        try {
            UnixSocketTransport.stop(server, socket);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.warn("Could not remove {}: {}", socket, e.getMessage());
        }
    }
}
