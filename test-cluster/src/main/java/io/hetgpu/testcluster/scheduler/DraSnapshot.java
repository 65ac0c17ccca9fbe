package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.kubescheduler.dra.ClaimAllocation;
import io.hetgpu.kubescheduler.dra.DeviceClass;
import io.hetgpu.kubescheduler.dra.DeviceId;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What kube-scheduler's DRA plugin reads at the start of a round: every ResourceSlice, DeviceClass and ResourceClaim,
 * and the devices the claims' allocations hold. Within the round, devices allocated for a pod are added
 * ({@link #withAllocated}), as kube-scheduler's assume cache holds them before the API server has them.
 *
 * @param claims           claims by {@code namespace/name}
 * @param allocatedInRound claims allocated earlier in this round ({@code namespace/name}), to the node their allocation
 *                         ties them to ("" for none): a second pod sharing one finds it allocated, as in the assume cache
 */
public record DraSnapshot(List<ResourceSlice> slices, Map<String, DeviceClass> classes, Map<String, ResourceClaim> claims,
                          Set<DeviceId> allocated, Map<String, String> allocatedInRound) {

    public static final DraSnapshot EMPTY = new DraSnapshot(List.of(), Map.of(), Map.of(), Set.of(), Map.of());

    public DraSnapshot {
        slices = List.copyOf(slices);
        classes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(classes));
        claims = Map.copyOf(claims);
        allocated = Set.copyOf(allocated);
        allocatedInRound = Map.copyOf(allocatedInRound);
    }

    public static DraSnapshot read(KubernetesClient client) {
        return of(client.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class).list().getItems(),
                client.resources(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class).list().getItems(),
                client.resources(ResourceClaim.class).inAnyNamespace().list().getItems());
    }

    /** The same from objects listed before (a copy of the cluster held in memory). */
    public static DraSnapshot of(List<io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice> listedSlices,
                                 List<io.fabric8.kubernetes.api.model.resource.v1.DeviceClass> listedClasses, List<ResourceClaim> listedClaims) {
        var slices = listedSlices.stream().map(DraObjects::slice).toList();
        var classes = DraObjects.classes(listedClasses);
        var claims = new LinkedHashMap<String, ResourceClaim>();
        var allocated = new HashSet<DeviceId>();
        for (var claim : listedClaims) {
            claims.put(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName(), claim);
            allocated.addAll(DraObjects.allocatedDevices(claim));
        }
        return new DraSnapshot(slices, classes, claims, allocated, Map.of());
    }

    public boolean inUse() {
        return !slices.isEmpty() || !classes.isEmpty() || !claims.isEmpty();
    }

    public DraSnapshot withAllocated(List<ClaimAllocation> allocations) {
        var more = new HashSet<>(allocated);
        var inRound = new java.util.HashMap<>(allocatedInRound);
        for (var allocation : allocations) {
            allocation.results().forEach(r -> more.add(r.id()));
            inRound.put(allocation.namespace() + "/" + allocation.claimName(), allocation.nodeName().orElse(""));
        }
        return new DraSnapshot(slices, classes, claims, more, inRound);
    }
}
