package io.hetgpu.deviceplugin.kubelet;

import io.hetgpu.gpu.tier.CardCatalog;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateRequest;
import io.hetgpu.deviceplugin.api.v1beta1.AllocateResponse;
import io.hetgpu.deviceplugin.api.v1beta1.ContainerPreferredAllocationRequest;
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
import io.hetgpu.deviceplugin.pods.DeviceHandshake;
import io.hetgpu.deviceplugin.pods.DeviceHandshake.Allocation;
import io.hetgpu.deviceplugin.pods.PendingAssignments;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The DevicePlugin service kubelet calls: a thin adapter over {@link GpuInventory} and the bind handshake
 * ({@link DeviceHandshake}: the extender's assignment where a pod has one, {@link PreferredAllocation} otherwise).
 */
public final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {

    private static final Logger log = LoggerFactory.getLogger(DevicePluginService.class);

    static final DevicePluginOptions OPTIONS = DevicePluginOptions.newBuilder()
            .setPreStartRequired(false)
            .setGetPreferredAllocationAvailable(true)
            .build();

    private final GpuInventory inventory;
    private final DeviceHandshake handshake;
    private final Set<DeviceListStrategy> strategies;
    private final PluginMetrics metrics;
    private final Consumer<List<String>> onAllocated;
    private final Consumer<Allocation.Mismatch> onMismatch;

    /** Without the handshake (no API server): every pod gets the allocator's choice. */
    public DevicePluginService(GpuInventory inventory, Set<DeviceListStrategy> strategies, PluginMetrics metrics,
                               Consumer<List<String>> onAllocated) {
        this(inventory, strategies, metrics, onAllocated, PendingAssignments.none(), mismatch -> { }, CardCatalog.defaults());
    }

    /**
     * @param onAllocated told the device IDs of every successful Allocate (the node inventory refreshes its free set)
     * @param pending     the pods bound here whose assigned devices kubelet has not allocated yet
     * @param onMismatch  told when kubelet allocated other devices than a pod's assignment (an Event on the pod)
     * @param catalog     the tier table, for pods that name their weakest acceptable card
     */
    public DevicePluginService(GpuInventory inventory, Set<DeviceListStrategy> strategies, PluginMetrics metrics,
                               Consumer<List<String>> onAllocated, PendingAssignments pending,
                               Consumer<Allocation.Mismatch> onMismatch, CardCatalog catalog) {
        this.inventory = inventory;
        this.handshake = new DeviceHandshake(pending, new PreferredAllocation(inventory.topology(), catalog));
        this.strategies = Set.copyOf(strategies);
        this.metrics = metrics;
        this.onAllocated = onAllocated;
        this.onMismatch = onMismatch;
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
        // Every container checked first, as Allocate does: the answer is whole or a reason.
        for (int i = 0; i < request.getContainerRequestsCount(); i++) {
            var problem = problem(request.getContainerRequests(i));
            if (!problem.isEmpty()) {
                log.warn("Refused GetPreferredAllocation: containerRequests[{}].{}", i, problem);
                response.onError(Status.INVALID_ARGUMENT.withDescription("containerRequests[" + i + "]." + problem).asRuntimeException());
                return;
            }
        }
        var answer = PreferredAllocationResponse.newBuilder();
        for (var container : request.getContainerRequestsList()) {
            var chosen = metrics.timePreferredAllocation(() -> handshake.prefer(container.getAvailableDeviceIDsList(),
                    container.getMustIncludeDeviceIDsList(), container.getAllocationSize()));
            answer.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(chosen));
        }
        response.onNext(answer.build());
        response.onCompleted();
    }

    /**
     * What kubelet's contract for one container's preference does not hold, or "": its size can be met from the
     * devices it offers, and the devices it must include are among them and no more than the size. kubelet keeps it;
     * a request that does not would have the allocator answer fewer devices than asked, or some it did not offer.
     */
    static String problem(ContainerPreferredAllocationRequest container) {
        int size = container.getAllocationSize();
        var available = Set.copyOf(container.getAvailableDeviceIDsList());
        if (size < 0) {
            return "allocationSize: expected a number of devices, got " + size;
        }
        if (size > available.size()) {
            return "allocationSize: " + devices(size) + " asked of " + available.size() + " available";
        }
        var missing = container.getMustIncludeDeviceIDsList().stream().filter(id -> !available.contains(id)).distinct().toList();
        if (!missing.isEmpty()) {
            return "mustIncludeDeviceIDs: " + missing + " are not among the available devices";
        }
        long mustInclude = container.getMustIncludeDeviceIDsList().stream().distinct().count();
        if (mustInclude > size) {
            return "mustIncludeDeviceIDs: " + devices(mustInclude) + " for an allocation of " + size;
        }
        return "";
    }

    private static String devices(long count) {
        return count + (count == 1 ? " device" : " devices");
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
        // Every container checked before any is matched: a refused request leaves the assignments as they were.
        for (var container : request.getContainerRequestsList()) {
            var check = inventory.check(container.getDevicesIdsList());
            if (!check.ok()) {
                metrics.allocationRefused();
                log.warn("Refused Allocate: {}", check.describe());
                response.onError(Status.INVALID_ARGUMENT.withDescription(check.describe()).asRuntimeException());
                return;
            }
        }
        var answer = AllocateResponse.newBuilder();
        var allocated = new ArrayList<String>();
        for (var container : request.getContainerRequestsList()) {
            var served = handshake.allocate(container.getDevicesIdsList());
            switch (served) {
                case Allocation.Followed followed -> metrics.assignmentFollowed();
                case Allocation.Unassigned unassigned -> metrics.unassignedAllocation();
                case Allocation.Mismatch mismatch -> {
                    metrics.assignmentMismatch();
                    // kubelet has already counted these devices as the container's: refusing would fail the pod, and
                    // other devices than kubelet's would be given twice. Serve kubelet's, and say so.
                    log.warn("Pod {}: kubelet allocated GPUs {}, not the ones the extender assigned, {}; serving kubelet's",
                            mismatch.pod().key(), mismatch.devices(), mismatch.assigned());
                    onMismatch.accept(mismatch);
                }
            }
            answer.addContainerResponses(KubeletDevices.responseOf(ContainerEdits.forDevices(served.devices(), strategies)));
            allocated.addAll(served.devices());
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
