package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DraDevice;
import io.hetgpu.extender.model.DraDriver;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The GPUs allocated claims hold on a node, as holdings of the pods they are reserved for. kube-scheduler counts a device
 * taken as long as some claim's {@code status.allocation} names it (its DRA plugin's allocated devices, admin access
 * aside), whoever the claim is reserved for; so does hetgpu. A claim reserved for one pod is that pod's holding, which an
 * eviction of the pod frees (its claim made from a template goes with it); a claim reserved for several pods, or for
 * none (its pod gone, the allocation not yet removed), is held by the claim itself, which no eviction frees.
 *
 * <p>The devices are exact, as a bind's record is: the node state subtracts them and never predicts them. A pod that is
 * also counted by its {@code nvidia.com/gpu} limit (served by a DeviceClass) holds what its claim says, not a prediction.
 * What kube-scheduler has allocated and not yet written (its claims "in flight" between Reserve and PreBind) cannot be
 * seen here; its own DRA filter, which runs before the extender, keeps those devices from being offered twice.
 */
public final class ClaimHoldings {

    /** The priority of a holding no eviction frees: above every pod's. */
    static final int NOT_EVICTABLE = Integer.MAX_VALUE;
    /** Results of one claim read (the API allows 32 per request, 32 requests). */
    static final int MAX_RESULTS = 1024;
    /**
     * Claims read per node: far more than 64 GPUs can be allocated to one by one (only devices that allow several
     * allocations, or admin access, let claims outnumber GPUs).
     */
    static final int MAX_CLAIMS_PER_NODE = 4096;
    /** Where a holding no pod owns is kept: the claim's UID after this prefix. */
    static final String CLAIM_PREFIX = "claim:";

    private ClaimHoldings() {
    }

    /**
     * The holdings of the allocated claims on one node.
     *
     * @param claims allocated claims whose devices are on this node
     * @param pods   a pod by UID, or null when the view has none of that UID
     */
    public static List<BoundPod> of(Collection<ResourceClaim> claims, Function<String, Pod> pods) {
        var devicesByHolder = new LinkedHashMap<String, Set<String>>();
        var allocatedAt = new HashMap<String, Instant>();
        int read = 0;
        for (var claim : claims) {
            if (++read > MAX_CLAIMS_PER_NODE) {
                break;
            }
            var devices = devices(claim);
            if (devices.isEmpty()) {
                continue;
            }
            var holder = holder(claim);
            devicesByHolder.computeIfAbsent(holder, key -> new LinkedHashSet<>()).addAll(devices);
            allocatedAt.merge(holder, allocatedAt(claim), (a, b) -> a.isBefore(b) ? a : b);
        }
        var holdings = new ArrayList<BoundPod>(devicesByHolder.size());
        for (var entry : devicesByHolder.entrySet()) {
            var holder = entry.getKey();
            var devices = List.copyOf(entry.getValue());
            var pod = holder.startsWith(CLAIM_PREFIX) ? null : pods.apply(holder);
            if (pod == null) {
                holdings.add(new BoundPod(holder, devices.size(), false, allocatedAt.get(holder), devices, NOT_EVICTABLE));
            } else {
                int priority = pod.getSpec() == null || pod.getSpec().getPriority() == null ? 0 : pod.getSpec().getPriority();
                holdings.add(new BoundPod(holder, devices.size(), false, BoundPods.boundAt(pod), devices, priority));
            }
        }
        return holdings;
    }

    /**
     * A node's holdings: the device plugin's pods' and the claims', a pod's claims replacing its device-plugin holding
     * (a plain GPU request a DeviceClass serves is counted by both; the claim names its devices).
     */
    public static List<BoundPod> merged(Collection<BoundPod> devicePlugin, List<BoundPod> claims) {
        if (claims.isEmpty()) {
            return List.copyOf(devicePlugin);
        }
        var byUid = new LinkedHashMap<String, BoundPod>();
        devicePlugin.forEach(pod -> byUid.put(pod.uid(), pod));
        claims.forEach(pod -> byUid.put(pod.uid(), pod));
        return List.copyOf(byUid.values());
    }

    /** The IDs of the GPUs a claim's allocation names (devices of GPU drivers, admin access aside), bounded. */
    static List<String> devices(ResourceClaim claim) {
        var allocation = claim.getStatus() == null ? null : claim.getStatus().getAllocation();
        if (allocation == null || allocation.getDevices() == null || allocation.getDevices().getResults() == null) {
            return List.of();
        }
        var devices = new ArrayList<String>();
        int read = 0;
        for (var result : allocation.getDevices().getResults()) {
            if (++read > MAX_RESULTS) {
                break;
            }
            if (result == null || Boolean.TRUE.equals(result.getAdminAccess()) || result.getDriver() == null || result.getPool() == null
                    || result.getDevice() == null || DraDriver.named(result.getDriver()).isEmpty()) {
                continue;
            }
            devices.add(DraDevice.id(result.getDriver(), result.getPool(), result.getDevice()));
        }
        return devices;
    }

    /** The pod a claim is reserved for when it is one pod, else the claim itself. */
    static String holder(ResourceClaim claim) {
        var reserved = claim.getStatus() == null ? null : claim.getStatus().getReservedFor();
        String pod = null;
        int pods = 0;
        if (reserved != null) {
            for (var consumer : reserved) {
                if (consumer != null && "pods".equals(consumer.getResource()) && (consumer.getApiGroup() == null || consumer.getApiGroup().isEmpty())
                        && consumer.getUid() != null) {
                    pod = consumer.getUid();
                    pods++;
                }
            }
        }
        if (pods == 1 && reserved.size() == 1) {
            return pod;
        }
        var metadata = claim.getMetadata();
        return CLAIM_PREFIX + (metadata.getUid() != null ? metadata.getUid() : metadata.getNamespace() + "/" + metadata.getName());
    }

    /**
     * The nodes a claim's devices are on: its allocation's node selector names the node for node-local devices (what
     * kube-scheduler's allocator writes), else the nodes whose slices publish the pools its results name.
     */
    static Set<String> nodesOf(ResourceClaim claim, Function<List<String>, String> nodeOfPool) {
        var nodes = new LinkedHashSet<String>();
        var allocation = claim.getStatus() == null ? null : claim.getStatus().getAllocation();
        if (allocation == null) {
            return nodes;
        }
        var selector = allocation.getNodeSelector();
        if (selector != null && selector.getNodeSelectorTerms() != null) {
            for (var term : selector.getNodeSelectorTerms()) {
                if (term == null || term.getMatchFields() == null) {
                    continue;
                }
                for (var field : term.getMatchFields()) {
                    if (field != null && "metadata.name".equals(field.getKey()) && "In".equals(field.getOperator())
                            && field.getValues() != null && field.getValues().size() == 1) {
                        nodes.add(field.getValues().getFirst());
                    }
                }
            }
        }
        if (nodes.isEmpty() && allocation.getDevices() != null && allocation.getDevices().getResults() != null) {
            int read = 0;
            for (var result : allocation.getDevices().getResults()) {
                if (++read > MAX_RESULTS || nodes.size() >= 8) {
                    break;
                }
                if (result != null && result.getDriver() != null && result.getPool() != null) {
                    var node = nodeOfPool.apply(List.of(result.getDriver(), result.getPool()));
                    if (node != null) {
                        nodes.add(node);
                    }
                }
            }
        }
        return nodes;
    }

    /** The driver and pool of each device a claim's allocation names, distinct and bounded as {@link #nodesOf} reads them. */
    static List<List<String>> poolsOf(ResourceClaim claim) {
        var pools = new LinkedHashSet<List<String>>();
        var allocation = claim.getStatus() == null ? null : claim.getStatus().getAllocation();
        if (allocation == null || allocation.getDevices() == null || allocation.getDevices().getResults() == null) {
            return List.of();
        }
        int read = 0;
        for (var result : allocation.getDevices().getResults()) {
            if (++read > MAX_RESULTS || pools.size() >= 8) {
                break;
            }
            if (result != null && result.getDriver() != null && result.getPool() != null) {
                pools.add(List.of(result.getDriver(), result.getPool()));
            }
        }
        return List.copyOf(pools);
    }

    private static Instant allocatedAt(ResourceClaim claim) {
        var allocation = claim.getStatus().getAllocation();
        var text = allocation.getAllocationTimestamp() != null ? allocation.getAllocationTimestamp()
                : claim.getMetadata().getCreationTimestamp();
        if (text == null) {
            return Instant.EPOCH;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }
}
