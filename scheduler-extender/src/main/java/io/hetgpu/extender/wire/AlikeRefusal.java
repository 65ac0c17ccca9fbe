package io.hetgpu.extender.wire;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One unresolvable reason standing for several nodes refused alike: a filter answer on the wire names the first such
 * node with the reason and how many more it stands for, and leaves the others out. kube-scheduler reads a node an answer
 * names nowhere as unresolvable too (since 1.31; before, it may try to preempt there, and the preempt verb keeps no
 * such node), so the same nodes are refused the same way, and its FailedScheduling event reads "1 node has 4 K80 …,
 * pod needs A100 or H100 (and 717 more nodes alike, not listed)". A 5,000-node answer otherwise repeated thousands of
 * such lines. Refusals preemption could fix are each named with their own reason: kube-scheduler looks for victims only
 * on nodes it has such a status for.
 */
public final class AlikeRefusal {

    private static final Pattern MORE = Pattern.compile(" \\(and (\\d+) more nodes? alike, not listed\\)$");

    private AlikeRefusal() {
    }

    /**
     * The refusals with each reason once, under the first node refused for it (in their order), saying how many more
     * nodes it stands for.
     */
    public static Map<String, String> grouped(Map<String, String> refusals) {
        var byReason = new LinkedHashMap<String, int[]>();
        var firstNodes = new ArrayList<String>();
        refusals.forEach((node, reason) -> {
            var count = byReason.get(reason);
            if (count == null) {
                byReason.put(reason, new int[] {firstNodes.size(), 1});
                firstNodes.add(node);
            } else {
                count[1]++;
            }
        });
        if (byReason.size() == refusals.size()) {
            return refusals;
        }
        var grouped = new LinkedHashMap<String, String>();
        byReason.forEach((reason, count) -> grouped.put(firstNodes.get(count[0]), reason(reason, count[1] - 1)));
        return grouped;
    }

    /** The reason of a node that stands for {@code more} others refused for it too. */
    public static String reason(String reason, int more) {
        return more == 0 ? reason : reason + " (and " + more + (more == 1 ? " more node" : " more nodes") + " alike, not listed)";
    }

    /** How many nodes an answer's reason stands for: the one it is given under, and those it says are alike. */
    public static int nodes(String reason) {
        var matcher = MORE.matcher(reason);
        return matcher.find() ? 1 + Integer.parseInt(matcher.group(1)) : 1;
    }
}
