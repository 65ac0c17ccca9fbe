package io.hetgpu.extender.service;

import java.util.regex.Pattern;

/**
 * One unresolvable reason standing for several nodes refused alike: the filter names the first such node with the
 * reason and how many more it stands for, and leaves the others out (kube-scheduler reads a node left out as
 * unresolvable, as it reads the one named). The wording is kube-scheduler's FailedScheduling event's to show.
 */
public final class AlikeRefusal {

    private static final Pattern MORE = Pattern.compile(" \\(and (\\d+) more nodes? alike, not listed\\)$");

    private AlikeRefusal() {
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
