package io.hetgpu.extender.trust;

/** Why a {@code hetgpu.io/gpu-devices} record is not trusted: the {@code reason} of the untrusted records metric. */
public enum Distrust {
    /** No signature: not written by an extender (or written before records were signed). */
    UNSIGNED("unsigned"),
    /** A signature that is not this key's for this record and pod: forged, copied from another pod, or of an old key. */
    BAD_SIGNATURE("bad_signature"),
    /** A bind time later than now (beyond clock skew): such a record would count as a bind in flight for ever. */
    FUTURE("future"),
    /** More devices than the pod asks GPUs. */
    TOO_MANY_DEVICES("too_many_devices"),
    /** A record of a bound pod naming another node than the pod's. */
    OTHER_NODE("other_node"),
    /** A pod not bound yet that no extender would bind: of a scheduler not in {@code schedulerNames}, or held by scheduling gates. */
    NOT_SCHEDULABLE("not_schedulable");

    private final String tag;

    Distrust(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
