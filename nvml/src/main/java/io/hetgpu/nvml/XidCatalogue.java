package io.hetgpu.nvml;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The XIDs hetgpu knows, each with its {@link XidClass}, as data. {@link #nvidia()} is the table drawn from
 * NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors) and from NVIDIA's k8s-device-plugin, whose
 * hard-coded skip list is exactly the {@link XidClass#APPLICATION} entries here.
 *
 * <p>An XID not in the table is {@link #UNKNOWN_CLASS}: sticky until a reset or a reboot. NVIDIA's plugin
 * keeps every XID it does not skip until the plugin restarts; letting an XID nobody classified clear
 * itself after a minute could hand a broken GPU to the next pod, while a harmless one holding a GPU is
 * visible (events, metrics) and an admin can skip it with a flag.
 */
public record XidCatalogue(Map<Long, Entry> entries) {

    public static final XidClass UNKNOWN_CLASS = XidClass.RESET_REQUIRED;
    /** NVML reports double-bit ECC errors both as XID 48 and as an ECC event of their own. */
    public static final long DOUBLE_BIT_ECC = 48;

    public record Entry(long xid, XidClass xidClass, String description) {
        public Entry {
            if (xid <= 0) {
                throw new IllegalArgumentException("xid must be positive, got " + xid);
            }
            Objects.requireNonNull(xidClass, "xidClass");
            Objects.requireNonNull(description, "description");
        }
    }

    public XidCatalogue {
        entries = Map.copyOf(entries);
    }

    public static XidCatalogue nvidia() {
        var table = new LinkedHashMap<Long, Entry>();
        // NVIDIA's device plugin skips exactly these: application faults, the GPU stays healthy.
        add(table, 13, XidClass.APPLICATION, "graphics engine exception");
        add(table, 31, XidClass.APPLICATION, "GPU memory page fault");
        add(table, 43, XidClass.APPLICATION, "GPU stopped processing");
        add(table, 45, XidClass.APPLICATION, "preemptive cleanup, due to previous errors");
        add(table, 68, XidClass.APPLICATION, "video processor exception");
        add(table, 109, XidClass.APPLICATION, "context switch timeout");
        // RESTART_APP in the catalogue, but bus or firmware trouble can cause them too: marked, then cleared by time.
        add(table, 8, XidClass.TRANSIENT, "GPU stopped processing (idle timeout)");
        add(table, 32, XidClass.TRANSIENT, "invalid or corrupted push buffer stream");
        // RESET_GPU: memory and interconnect faults a GPU reset (or a driver reload) repairs.
        add(table, 48, XidClass.RESET_REQUIRED, "double-bit ECC error");
        add(table, 63, XidClass.RESET_REQUIRED, "row remapping or page retirement pending, applied at the next reset");
        add(table, 64, XidClass.RESET_REQUIRED, "row remapping or page retirement failure");
        add(table, 74, XidClass.RESET_REQUIRED, "NVLink error");
        add(table, 92, XidClass.RESET_REQUIRED, "high single-bit ECC error rate");
        add(table, 94, XidClass.RESET_REQUIRED, "contained ECC error");
        add(table, 95, XidClass.RESET_REQUIRED, "uncontained ECC error");
        add(table, 119, XidClass.RESET_REQUIRED, "GSP RPC timeout");
        add(table, 120, XidClass.RESET_REQUIRED, "GSP error");
        // RESTART_BM: the GPU left the bus; nothing short of a reboot brings it back reliably.
        add(table, 79, XidClass.REBOOT_REQUIRED, "GPU has fallen off the bus");
        return new XidCatalogue(table);
    }

    public XidClass classOf(long xid) {
        var entry = entries.get(xid);
        return entry == null ? UNKNOWN_CLASS : entry.xidClass();
    }

    /** " (double-bit ECC error)", or "" for an XID the table does not name. */
    public String describe(long xid) {
        var entry = entries.get(xid);
        return entry == null ? "" : " (" + entry.description() + ")";
    }

    private static void add(Map<Long, Entry> table, long xid, XidClass xidClass, String description) {
        table.put(xid, new Entry(xid, xidClass, description));
    }
}
