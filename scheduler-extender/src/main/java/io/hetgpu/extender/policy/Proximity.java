package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.NodeState;
import java.util.Locale;

/** Closeness on the node > rack > zone scale shared by job and data locality, and how it reads to people. */
public final class Proximity {

    static final double SAME_NODE = 1.0;
    static final double SAME_RACK = 0.6;
    static final double SAME_ZONE = 0.3;

    private Proximity() {
    }

    /** A closeness, or a mean of several, as where the data or the pods are: "same rack", or the figure with its scale. */
    public static String describe(double closeness) {
        if (closeness >= SAME_NODE - 0.005) {
            return "on the node";
        }
        if (Math.abs(closeness - SAME_RACK) < 0.005) {
            return "same rack";
        }
        if (Math.abs(closeness - SAME_ZONE) < 0.005) {
            return "same zone";
        }
        if (closeness < 0.005) {
            return "elsewhere";
        }
        return String.format(Locale.ROOT, "closeness %.2f (node %s, rack %s, zone %s)", closeness, scale(SAME_NODE), scale(SAME_RACK),
                scale(SAME_ZONE));
    }

    /**
     * A closeness to the job's pods ({@link JobCloseness}): as {@link #describe}, a mean saying how pods still waiting count.
     */
    public static String describeJob(double closeness) {
        var text = describe(closeness);
        return text.startsWith("closeness ") ? text.substring(0, text.length() - 1) + "; a pod still waiting 1 where it fits)" : text;
    }

    private static String scale(double closeness) {
        return closeness == Math.rint(closeness) ? String.valueOf((long) closeness) : String.valueOf(closeness);
    }

    static double to(NodeState node, DataLocality data) {
        if (data.nodes().contains(node.name())) {
            return SAME_NODE;
        }
        if (data.racks().contains(node.rack())) {
            return SAME_RACK;
        }
        if (data.zones().contains(node.zone())) {
            return SAME_ZONE;
        }
        return 0;
    }
}
