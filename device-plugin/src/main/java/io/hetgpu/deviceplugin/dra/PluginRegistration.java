package io.hetgpu.deviceplugin.dra;

import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.InfoRequest;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.PluginInfo;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationGrpc;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationStatus;
import io.hetgpu.deviceplugin.api.pluginregistration.v1.RegistrationStatusResponse;
import io.hetgpu.gpu.Quote;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Registration service kubelet's plugin watcher calls on the socket it finds in its plugin registry folder: GetInfo
 * names the driver and the socket of its DRA services, and NotifyRegistrationStatus says whether kubelet took it. A
 * kubelet that restarts finds the socket again and asks again; the last answer is the state.
 */
final class PluginRegistration extends RegistrationGrpc.RegistrationImplBase {

    private static final Logger log = LoggerFactory.getLogger(PluginRegistration.class);

    /** The plugin type kubelet's DRA handler registers ({@code DRAPlugin} in pluginregistration v1's constants). */
    static final String TYPE = "DRAPlugin";
    /**
     * The services served, newest first, as kubeletplugin of k8s.io/dynamic-resource-allocation lists them: the DRA
     * services, then the optional health services. kubelet takes the first DRA service it knows and ignores the names it
     * does not; from 1.37 it opens a health stream only to a driver that lists a health service.
     */
    static final List<String> SERVICES = List.of(DraServiceV1.SERVICE, DraServiceV1beta1.SERVICE,
            DraHealthServiceV1.SERVICE, DraHealthServiceV1alpha1.SERVICE);

    /** Where kubelet stands with the plugin. */
    sealed interface State {
        record Waiting() implements State { }
        record Registered() implements State { }
        record Refused(String reason) implements State { }
    }

    private final String driver;
    private final Path draSocket;
    private final DraMetrics metrics;
    private volatile State state = new State.Waiting();

    PluginRegistration(String driver, Path draSocket, DraMetrics metrics) {
        this.driver = driver;
        this.draSocket = draSocket;
        this.metrics = metrics;
    }

    State state() {
        return state;
    }

    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> response) {
        response.onNext(PluginInfo.newBuilder().setType(TYPE).setName(driver).setEndpoint(draSocket.toString())
                .addAllSupportedVersions(SERVICES).build());
        response.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(RegistrationStatus status, StreamObserver<RegistrationStatusResponse> response) {
        if (status.getPluginRegistered()) {
            if (!(state instanceof State.Registered)) {
                log.info("Registered with kubelet as DRA driver {} (DRA services at {})", driver, draSocket);
            }
            state = new State.Registered();
            metrics.registered();
        } else {
            var reason = status.getError().isEmpty() ? "no reason given" : Quote.cut(status.getError(), 500);
            log.warn("kubelet refused DRA driver {}: {}", driver, reason);
            state = new State.Refused(reason);
        }
        response.onNext(RegistrationStatusResponse.getDefaultInstance());
        response.onCompleted();
    }

    /** Why the plugin is not registered; empty when it is. */
    Optional<String> notRegistered() {
        return switch (state) {
            case State.Registered r -> Optional.empty();
            case State.Waiting w -> Optional.of("kubelet has not registered DRA driver " + driver + " yet");
            case State.Refused refused -> Optional.of("kubelet refused DRA driver " + driver + ": " + refused.reason());
        };
    }
}
