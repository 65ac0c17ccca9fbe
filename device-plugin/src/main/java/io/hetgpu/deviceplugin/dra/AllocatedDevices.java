package io.hetgpu.deviceplugin.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which of this node's GPUs an allocated ResourceClaim holds: the allocation's results of this driver, each named
 * device mapped to its GPU. Pure: the claim as read from the API server, the node's topology with its live health.
 * A claim that cannot be prepared here gets a reason naming the field and the value; another driver's results are
 * left to that driver.
 */
public final class AllocatedDevices {

    /**
     * More results than any claim the API server accepts (it allows 32): a claim read with more is refused rather than
     * walked whole.
     */
    static final int MAX_RESULTS = 128;

    private AllocatedDevices() {
    }

    /** One GPU of the claim, with the claim's requests it serves (subrequest names cut off, as kubelet matches them). */
    public record AllocatedGpu(String deviceName, int position, String uuid, List<String> requestNames) {
        public AllocatedGpu {
            requestNames = List.copyOf(requestNames);
        }
    }

    public sealed interface Outcome {
        record Gpus(List<AllocatedGpu> gpus) implements Outcome {
            public Gpus {
                gpus = List.copyOf(gpus);
            }
        }

        record Refused(String reason) implements Outcome { }
    }

    /**
     * @param claim    the claim as the API server holds it; null when it does not
     * @param asked    the claim kubelet asked for
     * @param driver   this driver's name
     * @param pool     this node's pool
     * @param topology this node's GPUs with their health now
     */
    public static Outcome read(ResourceClaim claim, ClaimRef asked, String driver, String pool, NodeTopology topology) {
        if (claim == null) {
            return new Outcome.Refused("claim " + asked + " not found in the API server");
        }
        var uid = claim.getMetadata() == null ? null : claim.getMetadata().getUid();
        if (!asked.uid().equals(uid)) {
            return new Outcome.Refused("claim " + Quote.cut(asked.namespace()) + "/" + Quote.cut(asked.name()) + " has uid "
                    + Quote.of(uid) + ", kubelet asked for uid " + Quote.of(asked.uid()) + " (deleted and created again?)");
        }
        var status = claim.getStatus();
        if (status == null || status.getAllocation() == null || status.getAllocation().getDevices() == null) {
            return new Outcome.Refused("claim " + asked + " is not allocated (status.allocation.devices is empty)");
        }
        var results = Objects.requireNonNullElse(status.getAllocation().getDevices().getResults(), List.<DeviceRequestAllocationResult>of());
        if (results.size() > MAX_RESULTS) {
            return new Outcome.Refused("claim " + asked + ": status.allocation.devices.results holds " + results.size()
                    + " results, more than " + MAX_RESULTS);
        }
        // By position, in the allocation's order; a GPU named by several requests serves each of them.
        var byPosition = new LinkedHashMap<Integer, Set<String>>();
        for (int i = 0; i < results.size(); i++) {
            var result = results.get(i);
            if (result == null || !driver.equals(result.getDriver())) {
                continue;
            }
            var field = "status.allocation.devices.results[" + i + "]";
            if (!pool.equals(result.getPool())) {
                return new Outcome.Refused("claim " + asked + ": " + field + ".pool is " + Quote.of(result.getPool())
                        + ", not this node's pool " + Quote.of(pool));
            }
            var position = HetgpuDra.positionOf(result.getDevice());
            if (position.isEmpty() || position.get() >= topology.size()) {
                return new Outcome.Refused("claim " + asked + ": " + field + ".device " + Quote.of(result.getDevice())
                        + " is not a GPU of this node (it has " + topology.size() + ", gpu-0 to gpu-" + (topology.size() - 1) + ")");
            }
            var gpu = topology.device(position.get());
            if (!gpu.isHealthy()) {
                return new Outcome.Refused("claim " + asked + ": " + result.getDevice() + " (" + gpu.uuid() + ") is "
                        + gpu.health().label());
            }
            var request = result.getRequest() == null ? "" : result.getRequest();
            int slash = request.indexOf('/');
            var names = byPosition.computeIfAbsent(position.get(), p -> new LinkedHashSet<>());
            if (!request.isEmpty()) {
                names.add(slash < 0 ? request : request.substring(0, slash));
            }
        }
        var gpus = new ArrayList<AllocatedGpu>(byPosition.size());
        byPosition.forEach((position, names) -> gpus.add(new AllocatedGpu(HetgpuDra.deviceName(position), position,
                topology.device(position).uuid(), List.copyOf(names))));
        return new Outcome.Gpus(gpus);
    }
}
