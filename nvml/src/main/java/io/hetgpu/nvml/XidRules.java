package io.hetgpu.nvml;

import java.util.Objects;

/**
 * The catalogue with an admin's overrides, as NVIDIA's plugin allows them: {@code skipped} XIDs never mark a
 * GPU (DP_DISABLE_HEALTHCHECKS, {@code all} included), and {@code critical} ones always do, even when
 * skipped or catalogued as application faults (DP_ENABLE_HEALTHCHECKS, which wins over the skip list).
 * A critical XID keeps its catalogued class when that class marks the GPU, and is otherwise handled like an
 * XID the catalogue does not know.
 */
public record XidRules(XidCatalogue catalogue, XidSelection skipped, XidSelection critical) {

    public XidRules {
        Objects.requireNonNull(catalogue, "catalogue");
        Objects.requireNonNull(skipped, "skipped");
        Objects.requireNonNull(critical, "critical");
    }

    /** NVIDIA's catalogue, no overrides: what the device plugin's flags default to. */
    public static XidRules defaults() {
        return new XidRules(XidCatalogue.nvidia(), XidSelection.NONE, XidSelection.NONE);
    }

    public XidClass classify(long xid) {
        var catalogued = catalogue.classOf(xid);
        if (critical.contains(xid)) {
            return catalogued.marksGpu() ? catalogued : XidCatalogue.UNKNOWN_CLASS;
        }
        return skipped.contains(xid) ? XidClass.APPLICATION : catalogued;
    }

    /** A double-bit ECC event is XID 48 seen a second way: skipping 48 skips it too. */
    public XidClass classifyDoubleBitEcc() {
        return classify(XidCatalogue.DOUBLE_BIT_ECC);
    }

    public String describe(long xid) {
        return catalogue.describe(xid);
    }

    @Override
    public String toString() {
        return "skipped XIDs: " + skipped + " (besides the catalogue's application faults), critical XIDs: " + critical;
    }
}
