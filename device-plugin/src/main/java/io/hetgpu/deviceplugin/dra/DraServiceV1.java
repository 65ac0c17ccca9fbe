package io.hetgpu.deviceplugin.dra;

import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.dra.v1.Claim;
import io.hetgpu.deviceplugin.api.dra.v1.DRAPluginGrpc;
import io.hetgpu.deviceplugin.api.dra.v1.Device;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourceResponse;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodePrepareResourcesResponse;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourceResponse;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1.NodeUnprepareResourcesResponse;
import java.util.List;

/** kubelet's DRAPlugin service, version v1, over {@link ClaimPreparer}: protobufs in and out, nothing else. */
final class DraServiceV1 extends DRAPluginGrpc.DRAPluginImplBase {

    /** The name kubelet looks for among a registration's supported versions. */
    static final String SERVICE = "v1.DRAPlugin";

    private final ClaimPreparer preparer;

    DraServiceV1(ClaimPreparer preparer) {
        this.preparer = preparer;
    }

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request, StreamObserver<NodePrepareResourcesResponse> response) {
        var answer = NodePrepareResourcesResponse.newBuilder();
        preparer.prepare(refs(request.getClaimsList())).forEach((uid, result) -> answer.putClaims(uid, switch (result) {
            case ClaimResult.Failed failed -> NodePrepareResourceResponse.newBuilder().setError(failed.reason()).build();
            case ClaimResult.Prepared prepared -> NodePrepareResourceResponse.newBuilder()
                    .addAllDevices(prepared.devices().stream().map(DraServiceV1::device).toList()).build();
        }));
        response.onNext(answer.build());
        response.onCompleted();
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request, StreamObserver<NodeUnprepareResourcesResponse> response) {
        var answer = NodeUnprepareResourcesResponse.newBuilder();
        preparer.unprepare(refs(request.getClaimsList())).forEach((uid, error) ->
                answer.putClaims(uid, NodeUnprepareResourceResponse.newBuilder().setError(error).build()));
        response.onNext(answer.build());
        response.onCompleted();
    }

    private static List<ClaimRef> refs(List<Claim> claims) {
        return claims.stream().map(claim -> new ClaimRef(claim.getNamespace(), claim.getName(), claim.getUid())).toList();
    }

    private static Device device(PreparedDevice device) {
        return Device.newBuilder().addAllRequestNames(device.requestNames()).setPoolName(device.poolName())
                .setDeviceName(device.deviceName()).addAllCdiDeviceIds(device.cdiDeviceIds()).build();
    }
}
