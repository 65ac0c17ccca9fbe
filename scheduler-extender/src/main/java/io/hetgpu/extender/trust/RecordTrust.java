package io.hetgpu.extender.trust;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which {@code hetgpu.io/gpu-devices} records count: only those an extender wrote. The bind verb signs each record with
 * the key replicas share ({@link #sign}); a record counts only when that signature is this key's for the record and its
 * pod, and the record makes sense for the pod ({@link #judge}). Anything else holds nothing, and is logged and counted
 * once per pod ({@link UntrustedRecords}): a bound pod's GPUs are then predicted, as for a pod bound without a record,
 * and a pod not bound yet holds none.
 */
public final class RecordTrust {

    /** How far ahead of this clock another replica's may be: a bind time later than that is refused. */
    public static final Duration CLOCK_SKEW = Duration.ofSeconds(5);

    private volatile RecordKey key;
    private final Set<String> schedulerNames;
    private final Clock clock;
    private final UntrustedRecords refusals;

    /**
     * @param key            the shared key; null until {@link #use} is called (every record is refused until then)
     * @param schedulerNames the schedulers whose pods the bind verb binds (the config's {@code schedulerNames}): a pod
     *                       of another one is never being bound by an extender
     */
    public RecordTrust(RecordKey key, Set<String> schedulerNames, Clock clock, UntrustedRecords refusals) {
        this.key = key;
        this.schedulerNames = Set.copyOf(schedulerNames);
        this.clock = clock;
        this.refusals = refusals;
    }

    /** With a key of this process's own: without an API server no other process writes records it would have to read. */
    public static RecordTrust ownKey(Set<String> schedulerNames) {
        return ownKey(schedulerNames, new UntrustedRecords(UntrustedRecords.DEFAULT_MEMORY));
    }

    /** With a key of this process's own, refusals told to {@code refusals}. */
    public static RecordTrust ownKey(Set<String> schedulerNames, UntrustedRecords refusals) {
        return new RecordTrust(RecordKey.random(new SecureRandom()), schedulerNames, Clock.systemUTC(), refusals);
    }

    /**
     * Without a key until {@link #use} is given the replicas' one: until then no record is trusted, and none is logged or
     * counted (the view judges them all again once the key is in use).
     */
    public static RecordTrust awaitingKey(Set<String> schedulerNames) {
        return new RecordTrust(null, schedulerNames, Clock.systemUTC(), new UntrustedRecords(UntrustedRecords.DEFAULT_MEMORY));
    }

    /** Starts using {@code shared}: the key read from (or written to) the replicas' Secret. */
    public void use(RecordKey shared) {
        this.key = shared;
    }

    /** Whether a key is in use. */
    public boolean hasKey() {
        return key != null;
    }

    /** The record, signed for the pod of UID {@code podUid}. */
    public DeviceAssignment sign(DeviceAssignment record, String podUid) {
        var current = key;
        if (current == null) {
            throw new IllegalStateException("no record key yet: the extender has not read it from its Secret");
        }
        return record.signed(current.sign(record, podUid));
    }

    /** The refusals so far, for metrics. */
    public UntrustedRecords refusals() {
        return refusals;
    }

    /**
     * Whether the pod's record counts, {@code uid} being the key its holding is kept under and {@code gpus} what its request
     * asks. A refusal is logged and counted (once per pod and reason).
     */
    public boolean trusts(Pod pod, String uid, DeviceAssignment record, int gpus) {
        var current = key;
        if (current == null) {
            return false;
        }
        var metadata = pod.getMetadata();
        var spec = pod.getSpec();
        var boundTo = spec == null || spec.getNodeName() == null ? "" : spec.getNodeName();
        var schedulerName = spec == null || spec.getSchedulerName() == null || spec.getSchedulerName().isEmpty()
                ? "default-scheduler" : spec.getSchedulerName();
        var gated = spec != null && spec.getSchedulingGates() != null && !spec.getSchedulingGates().isEmpty();
        var verdict = judge(record, new RecordedPod(uid, boundTo, gpus, schedulerName, gated), clock.instant(), schedulerNames, current);
        if (verdict instanceof Untrusted untrusted) {
            refusals.refused(uid, metadata.getNamespace(), metadata.getName(), untrusted.reason(), untrusted.why());
            return false;
        }
        return true;
    }

    /**
     * What of a pod a record is judged against.
     *
     * @param uid           its UID (the signature covers it: a record copied onto another pod is not that pod's)
     * @param boundTo       the node it is bound to, "" while it is not bound
     * @param gpus          the GPUs its request asks
     * @param schedulerName its {@code spec.schedulerName}
     * @param gated         whether it has scheduling gates (then no scheduler is placing it)
     */
    public record RecordedPod(String uid, String boundTo, int gpus, String schedulerName, boolean gated) {
    }

    /** Whether a record counts. */
    public sealed interface Verdict permits Trusted, Untrusted {
    }

    /** The record counts. */
    public record Trusted() implements Verdict {
    }

    /** The record counts for nothing, for {@code reason}; {@code why} says it with the values. */
    public record Untrusted(Distrust reason, String why) implements Verdict {
    }

    /**
     * The rule: a record counts only when it names the pod's node (bound pods), a pod some extender could be binding
     * (pods not bound yet: of one of {@code schedulerNames}, without scheduling gates), no more devices than the pod asks
     * GPUs, a bind time not after {@code now} (beyond {@link #CLOCK_SKEW}: a record of a pod not bound yet counts while
     * fresh, and one from the future would be fresh for ever), and {@code key}'s signature for itself and the pod's UID.
     */
    public static Verdict judge(DeviceAssignment record, RecordedPod pod, Instant now, Set<String> schedulerNames, RecordKey key) {
        if (!pod.boundTo().isEmpty() && !pod.boundTo().equals(record.node())) {
            return new Untrusted(Distrust.OTHER_NODE, "names node " + Quote.of(record.node()) + ", the pod is bound to "
                    + Quote.of(pod.boundTo()));
        }
        if (pod.boundTo().isEmpty() && !schedulerNames.contains(pod.schedulerName())) {
            return new Untrusted(Distrust.NOT_SCHEDULABLE, "spec.schedulerName " + Quote.of(pod.schedulerName()) + " is not one of "
                    + new TreeSet<>(schedulerNames) + " (schedulerNames): no extender binds it");
        }
        if (pod.boundTo().isEmpty() && pod.gated()) {
            return new Untrusted(Distrust.NOT_SCHEDULABLE, "spec.schedulingGates is not empty: no scheduler places it yet");
        }
        if (record.devices().size() > pod.gpus()) {
            return new Untrusted(Distrust.TOO_MANY_DEVICES, "devices lists " + record.devices().size() + ", the pod asks "
                    + pod.gpus() + " GPUs");
        }
        if (record.boundAt().isAfter(now.plus(CLOCK_SKEW))) {
            return new Untrusted(Distrust.FUTURE, "boundAt " + record.boundAt() + " is after now (" + now + ")");
        }
        if (record.signature().isEmpty()) {
            return new Untrusted(Distrust.UNSIGNED, "no sig: not written by the extender's bind verb");
        }
        if (key == null || !key.signed(record, pod.uid())) {
            return new Untrusted(Distrust.BAD_SIGNATURE, "sig is not the extender's signature of this record for pod UID "
                    + Quote.of(pod.uid()) + " (forged, copied from another pod, or signed with a key since replaced)");
        }
        return new Trusted();
    }
}
