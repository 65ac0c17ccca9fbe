package io.hetgpu.extender.model;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A pod already bound to a node that holds (or is about to hold) GPUs there.
 *
 * @param uid           the pod's UID
 * @param gpuCount      GPUs it holds
 * @param requireNvlink whether it asked for an NVLink set (the device plugin then picked one)
 * @param boundAt       when it was bound (its PodScheduled condition, else its creation time)
 * @param devices       the device IDs the extender's bind verb assigned it on this node (its
 *                      {@code hetgpu.io/gpu-devices} annotation), or empty when it has no assignment for this node:
 *                      then which devices it holds can only be predicted
 * @param priority      its {@code spec.priority}: pods of lower priority than a pod are what preemption may evict for it
 * @param releasedAt    when it let its GPUs go (deleted, evicted or finished), {@link #HOLDING} while it holds them. The
 *                      device plugin's free list can show a released pod's devices taken for a while (kubelet frees
 *                      them lazily): while the extender remembers the release, they count free, so that a preemptor
 *                      whose victims are gone is not refused (and does not preempt a second time)
 * @param binding       whether the pod is not bound yet and only its record says where it is going: some extender (this
 *                      one, another replica, or the scheduler leader before a failover) is binding it to this node right
 *                      now. Its {@code devices} are the record's, {@code boundAt} is the record's bind time; such a
 *                      holding counts only while the record is fresh ({@link #freshBinding}), and is never predicted
 *                      (no record readable on this node's devices, no holding) nor freed by preemption (it runs nowhere yet)
 */
public record BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt, List<String> devices, int priority,
                       Instant releasedAt, boolean binding) {

    /**
     * How long a release counts against the free list: far longer than kubelet takes to free a deleted pod's devices and
     * the plugin to publish a list without them.
     */
    public static final Duration RELEASE_MEMORY = Duration.ofMinutes(2);

    /** The {@code releasedAt} of a pod that still holds its GPUs. */
    public static final Instant HOLDING = Instant.MAX;

    public BoundPod {
        Objects.requireNonNull(boundAt, "boundAt");
        Objects.requireNonNull(releasedAt, "releasedAt");
        devices = List.copyOf(devices);
    }

    /** A bound pod, holding its GPUs or having let them go at {@code releasedAt}. */
    public BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt, List<String> devices, int priority,
                    Instant releasedAt) {
        this(uid, gpuCount, requireNvlink, boundAt, devices, priority, releasedAt, false);
    }

    /** A pod that holds its GPUs. */
    public BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt, List<String> devices, int priority) {
        this(uid, gpuCount, requireNvlink, boundAt, devices, priority, HOLDING);
    }

    /**
     * A pod not bound yet whose {@code hetgpu.io/gpu-devices} record, written at {@code recordedAt}, names this node: a bind
     * in flight, whichever process runs it. {@code gpuCount} is what the pod's request asks, never the record's count.
     */
    public static BoundPod binding(String uid, int gpuCount, List<String> devices, Instant recordedAt, int priority) {
        return new BoundPod(uid, gpuCount, false, recordedAt, devices, priority, HOLDING, true);
    }

    /** Whether this is a bind in flight whose record is still fresh at {@code now}, given how long a record lives. */
    public boolean freshBinding(Instant now, Duration recordLifetime) {
        return binding && boundAt.plus(recordLifetime).isAfter(now);
    }

    /** The same pod, having let its GPUs go at {@code when}. */
    public BoundPod releasedAt(Instant when) {
        return new BoundPod(uid, gpuCount, requireNvlink, boundAt, devices, priority, when, binding);
    }

    /** Whether it has let its GPUs go. */
    public boolean released() {
        return !releasedAt.equals(HOLDING);
    }

    /** Whether it let its GPUs go lately enough, for a free list read at {@code readAt}, that the list may still show them taken. */
    public boolean releasedAfter(Instant readAt) {
        // Added to the release, not taken from readAt: a node without a free list reads at Instant.MIN.
        return released() && releasedAt.plus(RELEASE_MEMORY).isAfter(readAt);
    }

    /** A pod bound without the bind handshake (kube-scheduler bound it, or hetgpu's bind verb is not configured). */
    public BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt) {
        this(uid, gpuCount, requireNvlink, boundAt, List.of(), 0);
    }

    /** A pod of priority 0 (no PriorityClass). */
    public BoundPod(String uid, int gpuCount, boolean requireNvlink, Instant boundAt, List<String> devices) {
        this(uid, gpuCount, requireNvlink, boundAt, devices, 0);
    }

    /** Whether the extender recorded which devices it holds (else they are predicted). */
    public boolean assigned() {
        return !devices.isEmpty();
    }

    /**
     * Whether the pod may have been bound after a free list read at {@code readAt}, so that the list can
     * still show its GPUs free. The API server stamps conditions to the second: a stamp of exactly
     * 12:00:00 means some time before 12:00:01, so it counts as later than a read at 12:00:00.5. Such a
     * pod is briefly counted twice (held and promised), which only makes its node look fuller.
     */
    public boolean mayBeMissingFrom(Instant readAt) {
        var latest = boundAt.getNano() == 0 ? boundAt.plusSeconds(1) : boundAt;
        return latest.isAfter(readAt);
    }
}
