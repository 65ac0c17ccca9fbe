package io.hetgpu.deviceplugin.dra;

import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.dra.v1beta1.Claim;
import io.hetgpu.deviceplugin.api.dra.v1beta1.DRAPluginGrpc;
import io.hetgpu.deviceplugin.api.dra.v1beta1.Device;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodePrepareResourceResponse;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodePrepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodePrepareResourcesResponse;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodeUnprepareResourceResponse;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodeUnprepareResourcesRequest;
import io.hetgpu.deviceplugin.api.dra.v1beta1.NodeUnprepareResourcesResponse;
import java.util.List;

/** kubelet's DRAPlugin service, version v1beta1 (kubelets before 1.34 call it), over {@link ClaimPreparer}: protobufs in and out, nothing else. */
final class DraServiceV1beta1 extends DRAPluginGrpc.DRAPluginImplBase {

    /** The name kubelet looks for among a registration's supported versions. */
    static final String SERVICE = "v1beta1.DRAPlugin";

    private final ClaimPreparer preparer;

    DraServiceV1beta1(ClaimPreparer preparer) {
        this.preparer = preparer;
    }

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request, StreamObserver<NodePrepareResourcesResponse> response) {
        var answer = NodePrepareResourcesResponse.newBuilder();
        preparer.prepare(refs(request.getClaimsList())).forEach((uid, result) -> answer.putClaims(uid, switch (result) {
            case ClaimResult.Failed failed -> NodePrepareResourceResponse.newBuilder().setError(failed.reason()).build();
            case ClaimResult.Prepared prepared -> NodePrepareResourceResponse.newBuilder()
                    .addAllDevices(prepared.devices().stream().map(DraServiceV1beta1::device).toList()).build();
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
