package io.hetgpu.deviceplugin.pods;

import io.hetgpu.deviceplugin.devices.PreferredAllocation;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;

/**
 * kubelet's two allocation calls with the bind handshake: GetPreferredAllocation answers with the devices the
 * extender chose for the pod being admitted, Allocate checks kubelet's choice against them. Pods without a
 * followable assignment get the allocator's best-connected set among the cards they accept (their
 * {@code hetgpu.io/gpu-models}, {@code min-gpu-memory}, {@code min-compute-capability}), as before the handshake.
 */
public final class DeviceHandshake {

    /** What Allocate serves for one container, and how it relates to the assignment. */
    public sealed interface Allocation {
        /** The device IDs the container is given, in the order it sees them. */
        List<String> devices();

        /** kubelet allocated exactly the assigned devices: served in the assignment's order. */
        record Followed(PendingAssignment pod, List<String> devices) implements Allocation { }

        /** kubelet allocated other devices than the ones assigned to {@code pod}: kubelet's are served. */
        record Mismatch(PendingAssignment pod, List<String> devices) implements Allocation {
            public List<String> assigned() {
                return pod.nextDevices();
            }
        }

        /** No pending assignment asks for this many GPUs: a pod without one (another scheduler, no bind verb). */
        record Unassigned(List<String> devices) implements Allocation { }
    }

    /**
     * How long GetPreferredAllocation waits for the assignment of the pod kubelet is admitting to reach this plugin's
     * watch, which can lag kubelet's own by a moment. Where the handshake is in use, a pod without an assignment (another
     * scheduler's) waits that long once; where it is not (the degraded mode), only a pod the watch has not shown yet
     * waits, for its card requirements.
     */
    public static final java.time.Duration ASSIGNMENT_PATIENCE = java.time.Duration.ofSeconds(1);

    private final PendingAssignments pending;
    private final PreferredAllocation allocator;
    private final java.time.Duration patience;

    public DeviceHandshake(PendingAssignments pending, PreferredAllocation allocator) {
        this(pending, allocator, ASSIGNMENT_PATIENCE);
    }

    public DeviceHandshake(PendingAssignments pending, PreferredAllocation allocator, java.time.Duration patience) {
        this.pending = pending;
        this.allocator = allocator;
        this.patience = patience;
    }

    /**
     * The assigned devices of the pod being admitted when kubelet can give them (all among {@code available},
     * every one of {@code mustInclude} among them); otherwise the allocator's choice, among the cards the pod accepts
     * when it is a pod without an assignment that asks something of them.
     */
    public List<String> prefer(Collection<String> available, Collection<String> mustInclude, int size) {
        return assignedFor(available, mustInclude, size).orElseGet(() -> allocator.choose(available, mustInclude, size,
                pending.requirementsFor(size)));
    }

    /** The assigned devices {@link #prefer} would answer with, if any. */
    public Optional<List<String>> assignedFor(Collection<String> available, Collection<String> mustInclude, int size) {
        return pending.awaitMatch(size, patience).map(PendingAssignment::nextDevices)
                .filter(devices -> available.containsAll(devices) && devices.containsAll(mustInclude));
    }

    /**
     * kubelet allocates {@code ids} to one container: matched against the pod being admitted, whose container
     * is then marked allocated, whatever kubelet chose (so it is not matched twice).
     */
    public Allocation allocate(List<String> ids) {
        var match = pending.allocateMatch(ids.size());
        if (match.isEmpty()) {
            pending.allocatedWithoutAssignment(ids.size());
            return new Allocation.Unassigned(List.copyOf(ids));
        }
        var pod = match.get();
        var assigned = pod.nextDevices();
        if (new HashSet<>(assigned).equals(new HashSet<>(ids))) {
            return new Allocation.Followed(pod, assigned);
        }
        return new Allocation.Mismatch(pod, List.copyOf(ids));
    }
}
