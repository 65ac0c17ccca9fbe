package io.hetgpu.deviceplugin.kubelet;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationResponse;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginGrpc;
import io.hetgpu.deviceplugin.api.v1beta1.DevicePluginOptions;
import io.hetgpu.deviceplugin.api.v1beta1.Empty;
import io.hetgpu.deviceplugin.api.v1beta1.ListAndWatchResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerRequest;
import io.hetgpu.deviceplugin.api.v1beta1.PreStartContainerResponse;
import io.hetgpu.deviceplugin.api.v1beta1.PreferredAllocationRequest;
import io.hetgpu.deviceplugin.api.v1beta1.PreferredAllocationResponse;
import io.hetgpu.deviceplugin.devices.ContainerEdits;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.devices.PreferredAllocation;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/** The DevicePlugin service kubelet calls: a thin adapter over {@link GpuInventory} and {@link PreferredAllocation}. */
public final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {

    private static final Logger log = LoggerFactory.getLogger(DevicePluginService.class);

    static final DevicePluginOptions OPTIONS = DevicePluginOptions.newBuilder()
            .setPreStartRequired(false)
            .setGetPreferredAllocationAvailable(true)
            .build();

    private final GpuInventory inventory;
    private final PreferredAllocation preferred;
    private final Set<DeviceListStrategy> strategies;
    private final PluginMetrics metrics;
    private final Consumer<List<String>> onAllocated;

    /**
     * @param onAllocated told the device IDs of every successful Allocate (the node inventory refreshes its free set)
     */
    public DevicePluginService(GpuInventory inventory, Set<DeviceListStrategy> strategies, PluginMetrics metrics,
                               Consumer<List<String>> onAllocated) {
        this.inventory = inventory;
        this.preferred = new PreferredAllocation(inventory.topology());
        this.strategies = Set.copyOf(strategies);
        this.metrics = metrics;
        this.onAllocated = onAllocated;
    }

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
        response.onNext(OPTIONS);
        response.onCompleted();
    }

    /** Sends the full list at once and again after every health change, until kubelet hangs up. */
    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
        var call = (ServerCallStreamObserver<ListAndWatchResponse>) response;
        var watch = new AtomicReference<GpuInventory.Watch>();
        call.setOnCancelHandler(() -> {
            var registered = watch.getAndSet(null);
            if (registered != null) {
                registered.close();
            }
        });
        watch.set(inventory.watch(topology -> {
            synchronized (call) { // one stream, written from the health thread and from here
                if (!call.isCancelled()) {
                    call.onNext(KubeletDevices.listOf(topology));
                }
            }
        }));
        if (call.isCancelled()) { // cancelled before the watch was stored: the handler found nothing to close
            var registered = watch.getAndSet(null);
            if (registered != null) {
                registered.close();
            }
        }
    }

    @Override
    public void getPreferredAllocation(PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> response) {
        var answer = PreferredAllocationResponse.newBuilder();
        for (var container : request.getContainerRequestsList()) {
            var chosen = metrics.timePreferredAllocation(() -> preferred.choose(container.getAvailableDeviceIDsList(),
                    container.getMustIncludeDeviceIDsList(), container.getAllocationSize()));
            answer.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(chosen));
        }
        response.onNext(answer.build());
        response.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
        var answer = AllocateResponse.newBuilder();
        var allocated = new ArrayList<String>();
        for (var container : request.getContainerRequestsList()) {
            var ids = container.getDevicesIdsList();
            var check = inventory.check(ids);
            if (!check.ok()) {
                metrics.allocationRefused();
                log.warn("Refused Allocate: {}", check.describe());
                response.onError(Status.INVALID_ARGUMENT.withDescription(check.describe()).asRuntimeException());
                return;
            }
            answer.addContainerResponses(KubeletDevices.responseOf(ContainerEdits.forDevices(ids, strategies)));
            allocated.addAll(ids);
        }
        metrics.allocated(allocated.size());
        // Before answering, so that whoever sees the answer also sees the allocation recorded.
        onAllocated.accept(allocated);
        response.onNext(answer.build());
        response.onCompleted();
    }

    @Override
    public void preStartContainer(PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> response) {
        response.onNext(PreStartContainerResponse.getDefaultInstance()); // not required (see OPTIONS); nothing to prepare
        response.onCompleted();
    }
}
