package io.hetgpu.nvml;

/**
 * What an XID says about the GPU that raised it, and so what clears the mark it leaves. The classes follow
 * the "Resolution Bucket (Immediate Action)" of NVIDIA's XID catalogue: RESTART_APP faults caused by the
 * application are {@link #APPLICATION}, RESET_GPU ones {@link #RESET_REQUIRED}, RESTART_BM ones
 * {@link #REBOOT_REQUIRED}.
 */
public enum XidClass {
    /** The application's fault (a bad kernel, a killed process): the GPU is fine and is never marked. */
    APPLICATION("never marks the GPU"),
    /** A condition that passes: the GPU is healthy again once it has answered normally for the recovery period. */
    TRANSIENT("healthy again after answering normally for the recovery period"),
    /** The GPU needs a reset: unhealthy until NVML shows a reset happened, or the node reboots. */
    RESET_REQUIRED("unhealthy until NVML shows a GPU reset (or driver reload), or the node reboots"),
    /** The GPU needs the node rebooted: unhealthy until the boot ID changes. */
    REBOOT_REQUIRED("unhealthy until the node reboots");

    private final String rule;

    XidClass(String rule) {
        this.rule = rule;
    }

    /** The rule in words, for logs and docs. */
    public String rule() {
        return rule;
    }

    public boolean marksGpu() {
        return this != APPLICATION;
    }

    /** Whether time alone never clears the mark: only evidence of a reset or a reboot does. */
    public boolean sticky() {
        return this == RESET_REQUIRED || this == REBOOT_REQUIRED;
    }

    /** The stronger of two marks on one GPU: a reboot clears everything a reset does, and more. */
    public XidClass strongest(XidClass other) {
        return ordinal() >= other.ordinal() ? this : other;
    }
}
