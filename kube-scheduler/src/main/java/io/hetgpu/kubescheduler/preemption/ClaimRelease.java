package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.dra.DeviceId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The DynamicResources plugin's RemovePod for preemption's dry run, behind kube-scheduler's {@code DRAPreemption}
 * feature gate (KEP-5690, beta from 1.38; through 1.37 the plugin has no RemovePod and a victim's devices count held,
 * which a caller models by not releasing anything): when the pods
 * evicted on a node leave an allocated claim used by no one, its devices count free while the preemptor is checked
 * there. A claim reserved for pods is released once every one of them is evicted; a claim reserved for no one, once a
 * pod naming it is; a claim reserved for anything but pods (a PodGroup) is never released by an eviction.
 */
public final class ClaimRelease {

    private ClaimRelease() {
    }

    /**
     * One allocated claim as the dry run weighs it.
     *
     * @param devices      the devices its allocation holds
     * @param reservedPods the UIDs of the pods in its {@code status.reservedFor}
     * @param reservedOther whether something other than a pod is in its {@code reservedFor}
     * @param namedBy      the UIDs of the pods whose {@code spec.resourceClaims} name it
     */
    public record AllocatedClaim(Set<DeviceId> devices, Set<String> reservedPods, boolean reservedOther, Set<String> namedBy) {

        public AllocatedClaim {
            devices = Set.copyOf(devices);
            reservedPods = Set.copyOf(reservedPods);
            namedBy = Set.copyOf(namedBy);
        }

        /** Whether evicting these pods leaves the claim used by no one. */
        boolean releasedBy(Set<String> evicted) {
            if (reservedOther) {
                return false;
            }
            if (reservedPods.isEmpty()) {
                return namedBy.stream().anyMatch(evicted::contains);
            }
            return evicted.containsAll(reservedPods);
        }
    }

    /** The devices still allocated once the claims these evictions release are released. */
    public static Set<DeviceId> allocatedAfter(Set<DeviceId> allocated, List<AllocatedClaim> claims, Set<String> evicted) {
        if (evicted.isEmpty()) {
            return allocated;
        }
        var left = new HashSet<>(allocated);
        for (var claim : claims) {
            if (claim.releasedBy(evicted)) {
                left.removeAll(claim.devices());
            }
        }
        return left;
    }
}
