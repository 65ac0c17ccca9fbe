package io.hetgpu.nvml;

import java.util.Set;
import java.util.TreeSet;

/**
 * A set of XIDs an admin names on the command line: numbers separated by commas, or {@code all}
 * (NVIDIA's plugin also accepts {@code xids} for all, in DP_DISABLE_HEALTHCHECKS; so does this).
 */
public record XidSelection(boolean all, Set<Long> xids) {

    public static final XidSelection NONE = new XidSelection(false, Set.of());
    public static final XidSelection ALL = new XidSelection(true, Set.of());

    public XidSelection {
        for (var xid : xids) {
            if (xid == null || xid <= 0) {
                throw new IllegalArgumentException("XIDs must be positive numbers, got " + xid);
            }
        }
        xids = Set.copyOf(xids);
    }

    public static XidSelection of(long... xids) {
        var set = new TreeSet<Long>();
        for (var xid : xids) {
            set.add(xid);
        }
        return new XidSelection(false, set);
    }

    /**
     * "13,31", "all", or "" (none). Unlike NVIDIA's plugin, which logs and drops what it cannot read, a bad
     * entry is an error: a typo must not silently leave a GPU marked (or unmarked).
     *
     * @throws IllegalArgumentException naming the entry that is not an XID
     */
    public static XidSelection parse(String text) {
        if (text == null || text.isBlank()) {
            return NONE;
        }
        var xids = new TreeSet<Long>();
        for (var part : text.split(",", -1)) {
            var entry = part.strip().toLowerCase();
            if (entry.equals("all") || entry.equals("xids")) {
                return ALL;
            }
            if (entry.isEmpty()) {
                continue;
            }
            try {
                long xid = Long.parseLong(entry);
                if (xid > 0) {
                    xids.add(xid);
                    continue;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("expected XID numbers separated by commas, or all; \"" + part.strip()
                    + "\" is not an XID (in \"" + text + "\")");
        }
        return new XidSelection(false, xids);
    }

    public boolean contains(long xid) {
        return all || xids.contains(xid);
    }

    @Override
    public String toString() {
        return all ? "all" : xids.isEmpty() ? "none" : String.join(",", new TreeSet<>(xids).stream().map(String::valueOf).toList());
    }
}
