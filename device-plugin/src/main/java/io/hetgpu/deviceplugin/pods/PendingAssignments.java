package io.hetgpu.deviceplugin.pods;

import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.tier.CardRequirements;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The pods bound to this node whose {@code hetgpu.io/gpu-devices} assignment kubelet has not allocated yet:
 * the device plugin's half of the bind handshake.
 *
 * <p>kubelet's GetPreferredAllocation and Allocate do not say which pod they are for, but kubelet admits the
 * pods bound to its node one at a time, in order. So the pod being admitted is taken to be the
 * <em>earliest-bound</em> pending pod whose next container requests as many GPUs as kubelet asks for
 * ({@link #match}). Once kubelet has allocated a pod it is never matched again: because this plugin allocated
 * it ({@link #allocated}), because kubelet's PodResources API says it holds devices ({@link #heldByKubelet},
 * read when the plugin starts), or because the pod's containers have started ({@link BoundPod#pastAdmission}).
 *
 * <p>An annotation that cannot be followed (unreadable, for another node, naming devices this node does not
 * have, or not as many as the pod's containers request) is logged once per pod and value, with the field at
 * fault, and ignored: the pod is then allocated as a pod without an annotation is. Thread-safe: the pod watch
 * and kubelet's calls arrive on different threads.
 */
public final class PendingAssignments {

    private static final Logger log = LoggerFactory.getLogger(PendingAssignments.class);

    /** Sooner bound first; the uid makes the order total for two pods bound in the same instant. */
    private static final Comparator<PendingAssignment> BIND_ORDER = Comparator
            .comparing((PendingAssignment p) -> p.assignment().boundAt())
            .thenComparing(PendingAssignment::uid);

    private static final int MAX_LOGGED_VALUE = 300;

    private final String node;
    private final Set<String> deviceIds;
    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    // Guarded by this.
    private final Map<String, PendingAssignment> pending = new HashMap<>();  // by uid
    private final Set<String> allocated = new HashSet<>();                   // uids kubelet has allocated for
    private final Map<String, String> reported = new HashMap<>();            // uid -> the bad value last logged
    private boolean handshakeSeen;                                           // any assignment read since start
    private boolean listed;                                                  // the node's pods read once (or given up on)
    private final Map<String, Waiting> waiting = new HashMap<>();            // by uid: pods without an assignment
    private long arrivals;                                                   // the order waiting pods were seen bound in

    /**
     * A pod bound here with GPUs but without a followable assignment (the degraded mode, or a pod from another
     * scheduler): GetPreferredAllocation honours what it asks of its cards, if anything, when kubelet is taken to admit
     * it. Pods that ask nothing are kept too, so that admitting one does not use up the entry of a pod that asks.
     *
     * @param seen the order the watch saw it bound in, which is the order kubelet admits pods in
     */
    private record Waiting(String uid, String key, long seen, List<Integer> gpuRequests, int containersAllocated, CardRequirements cards) {
        int nextSize() {
            return gpuRequests.get(containersAllocated);
        }

        boolean lastContainer() {
            return containersAllocated == gpuRequests.size() - 1;
        }

        Waiting nextContainer() {
            return new Waiting(uid, key, seen, gpuRequests, containersAllocated + 1, cards);
        }
    }

    /**
     * @param node      this node's name: assignments for another node are never followed
     * @param deviceIds the device IDs this plugin advertises
     */
    public PendingAssignments(String node, Collection<String> deviceIds) {
        this.node = node;
        this.deviceIds = Set.copyOf(deviceIds);
    }

    /** None pending, ever: the plugin without an API server. */
    public static PendingAssignments none() {
        var none = new PendingAssignments("", List.of());
        none.listed();
        return none;
    }

    /**
     * How long kubelet's first GetPreferredAllocation waits for the node's pods to be listed: the plugin registers
     * before the list arrives (an interpreted JVM takes seconds to make its first API call), and a pod admitted before
     * it would be matched against nothing.
     */
    public static final java.time.Duration LIST_PATIENCE = java.time.Duration.ofSeconds(10);

    /** The node's pods have been read once, and the pods kubelet already holds devices for told: matching can begin. */
    public synchronized void listed() {
        listed = true;
        notifyAll();
    }

    /** A pod was added or changed. */
    public synchronized void update(BoundPod pod) {
        if (pod.pastAdmission()) {
            pending.remove(pod.uid());
            waiting.remove(pod.uid());
            allocated.add(pod.uid());
            return;
        }
        if (allocated.contains(pod.uid()) || !node.equals(pod.nodeName())) {
            return;
        }
        var current = pending.get(pod.uid());
        if (current != null && current.containersAllocated() > 0) {
            return; // kubelet is part-way through its containers: the assignment it started with stands
        }
        var followable = pod.assignment().flatMap(text -> read(pod, text));
        if (followable.isPresent()) {
            pending.put(pod.uid(), followable.get());
            waiting.remove(pod.uid());
            reported.remove(pod.uid());
            handshakeSeen = true;
            notifyAll();
        } else {
            pending.remove(pod.uid());
            if (pod.gpuRequests().isEmpty()) {
                waiting.remove(pod.uid());
            } else if (!waiting.containsKey(pod.uid())) {
                waiting.put(pod.uid(), new Waiting(pod.uid(), pod.key(), arrivals++, pod.gpuRequests(), 0, pod.cards()));
                notifyAll();
            }
        }
    }

    /** A pod was deleted. */
    public synchronized void remove(String uid) {
        pending.remove(uid);
        waiting.remove(uid);
        allocated.remove(uid);
        reported.remove(uid);
    }

    /** Pods ({@code namespace/name}) that kubelet's PodResources API shows holding devices: already allocated. */
    public synchronized void heldByKubelet(Set<String> podKeys) {
        waiting.values().removeIf(pod -> podKeys.contains(pod.key()));
        var held = pending.values().stream().filter(p -> podKeys.contains(p.key())).toList();
        for (var pod : held) {
            pending.remove(pod.uid());
            allocated.add(pod.uid());
            log.info("Pod {} already holds its GPUs (kubelet's PodResources): not matched again", pod.key());
        }
    }

    /** The pending pod kubelet is taken to be allocating {@code size} GPUs for: the earliest-bound one whose next container asks for that many. */
    public synchronized Optional<PendingAssignment> match(int size) {
        return pending.values().stream().filter(p -> p.nextSize() == size).min(BIND_ORDER);
    }

    /**
     * {@link #match}, waiting up to {@code patience} for one to arrive: kubelet admits a pod as soon as it sees it
     * bound, and this plugin's watch can see the same binding, with its assignment, a moment later. Before the
     * cluster has shown it uses the bind handshake (an assignment read), that is the degraded mode: then it waits only
     * while no pod of that size is known at all, so that a pod's card requirements are read before its GPUs are chosen.
     */
    public synchronized Optional<PendingAssignment> awaitMatch(int size, java.time.Duration patience) {
        awaitListed();
        long deadline = System.nanoTime() + patience.toNanos();
        var match = match(size);
        while (match.isEmpty() && (handshakeSeen || earliestWaiting(size).isEmpty())) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            match = match(size);
        }
        return match;
    }

    /** {@link #match} and {@link #allocated} in one step, so that two calls never take the same container. */
    public synchronized Optional<PendingAssignment> allocateMatch(int size) {
        // kubelet skips GetPreferredAllocation when it has exactly as many devices as asked: Allocate can come first.
        awaitListed();
        var match = match(size);
        match.ifPresent(this::allocated);
        return match;
    }

    /** kubelet allocated {@code match}'s next container (whatever devices it chose): that container is not matched again. */
    public synchronized void allocated(PendingAssignment match) {
        var current = pending.get(match.uid());
        if (current == null || current.containersAllocated() != match.containersAllocated()) {
            return; // allocated already, or the pod went away meanwhile
        }
        if (current.lastContainer()) {
            pending.remove(match.uid());
            allocated.add(match.uid());
        } else {
            pending.put(match.uid(), current.nextContainer());
        }
    }

    /**
     * What the pod kubelet is taken to be admitting asks of its cards, when it has no assignment: the earliest-seen
     * waiting pod whose next container asks for {@code size} GPUs; {@link CardRequirements#ANY} when none is known.
     */
    public synchronized CardRequirements requirementsFor(int size) {
        return earliestWaiting(size).map(Waiting::cards).orElse(CardRequirements.ANY);
    }

    /** kubelet allocated a container of {@code size} GPUs for no assigned pod: the waiting pod it was for is not matched again. */
    public synchronized void allocatedWithoutAssignment(int size) {
        earliestWaiting(size).ifPresent(pod -> {
            if (pod.lastContainer()) {
                waiting.remove(pod.uid());
                allocated.add(pod.uid());
            } else {
                waiting.put(pod.uid(), pod.nextContainer());
            }
        });
    }

    private Optional<Waiting> earliestWaiting(int size) {
        return waiting.values().stream().filter(pod -> pod.nextSize() == size).min(Comparator.comparingLong(Waiting::seen));
    }

    /** Waits, up to {@link #LIST_PATIENCE}, until the node's pods have been listed. */
    private void awaitListed() {
        long deadline = System.nanoTime() + LIST_PATIENCE.toNanos();
        while (!listed && deadline - System.nanoTime() > 0) {
            try {
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, deadline - System.nanoTime());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The pending pods, earliest-bound first. */
    public synchronized List<PendingAssignment> pending() {
        return pending.values().stream().sorted(BIND_ORDER).toList();
    }

    private Optional<PendingAssignment> read(BoundPod pod, String text) {
        try {
            var assignment = codec.decode(text);
            check(pod, assignment);
            return Optional.of(new PendingAssignment(pod.namespace(), pod.name(), pod.uid(), assignment, pod.gpuRequests(), 0));
        } catch (InventoryFormatException e) {
            if (!text.equals(reported.put(pod.uid(), text))) {
                log.warn("Pod {}: annotation {} not followed, its GPUs are chosen as for a pod without one: {}; value: {}",
                        pod.key(), HetgpuKeys.POD_GPU_DEVICES, e.getMessage(), shortened(text));
            }
            return Optional.empty();
        }
    }

    private void check(BoundPod pod, DeviceAssignment assignment) throws InventoryFormatException {
        if (!assignment.node().equals(node)) {
            throw new InventoryFormatException("node: the devices were chosen for node " + Quote.of(assignment.node())
                    + ", but the pod is bound to " + Quote.of(node));
        }
        for (int i = 0; i < assignment.devices().size(); i++) {
            if (!deviceIds.contains(assignment.devices().get(i))) {
                throw new InventoryFormatException("devices[" + i + "]: this node has no device " + Quote.of(assignment.devices().get(i)));
            }
        }
        int requested = pod.gpuRequests().stream().mapToInt(Integer::intValue).sum();
        if (requested != assignment.devices().size()) {
            throw new InventoryFormatException("devices: " + assignment.devices().size() + " device IDs, but the pod's containers request "
                    + requested + " GPUs " + pod.gpuRequests());
        }
    }

    private static String shortened(String text) {
        return text.length() <= MAX_LOGGED_VALUE ? text : text.substring(0, MAX_LOGGED_VALUE) + "… (" + text.length() + " characters)";
    }
}
