package io.hetgpu.deviceplugin.dra;

import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DeviceHealth;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DeviceIdentifier;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.HealthStatus;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse;

/** kubelet's DRAResourceHealth service, version v1alpha1, over {@link HealthStreams}: protobufs out, nothing else. */
final class DraHealthServiceV1alpha1 extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {

    /** The name kubelet looks for among a registration's supported versions. */
    static final String SERVICE = "v1alpha1.DRAResourceHealth";

    private final HealthStreams streams;

    DraHealthServiceV1alpha1(HealthStreams streams) {
        this.streams = streams;
    }

    @Override
    public void nodeWatchResources(NodeWatchResourcesRequest request, StreamObserver<NodeWatchResourcesResponse> response) {
        HealthCall.serve(streams, response, DraHealthServiceV1alpha1::message);
    }

    static NodeWatchResourcesResponse message(HealthStreams.Report report) {
        var message = NodeWatchResourcesResponse.newBuilder();
        for (var device : report.devices()) {
            message.addDevices(DeviceHealth.newBuilder()
                    .setDevice(DeviceIdentifier.newBuilder().setPoolName(device.poolName()).setDeviceName(device.deviceName()))
                    .setHealth(switch (device.health()) {
                        case HEALTHY -> HealthStatus.HEALTHY;
                        case UNHEALTHY -> HealthStatus.UNHEALTHY;
                    })
                    .setLastUpdatedTime(report.at().getEpochSecond())
                    .setHealthCheckTimeoutSeconds(report.timeout().toSeconds())
                    .setMessage(device.message()));
        }
        return message.build();
    }
}
