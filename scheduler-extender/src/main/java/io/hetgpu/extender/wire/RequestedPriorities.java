package io.hetgpu.extender.wire;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.RandomAccess;

/**
 * Prioritize's answer to a request whose names came as bytes ({@link RequestedNames}): each host is written back as the
 * bytes it came as, with no String made or looked up per node. A host the request did not name as bytes (one the
 * extender did not know, decoded for its reason) is held as a String.
 */
public final class RequestedPriorities extends AbstractList<HostPriority> implements RandomAccess {

    private final RequestedNames asked;
    /** Per entry, the index of its host in {@code asked}, or -1 for a host held in {@code hosts}. */
    private int[] indexes;
    private String[] hosts;
    private int[] scores;
    private int size;

    public RequestedPriorities(RequestedNames asked, int capacity) {
        this.asked = asked;
        int room = Math.max(4, capacity);
        indexes = new int[room];
        hosts = new String[room];
        scores = new int[room];
    }

    /** The host of the request's name at {@code askedIndex}, with its score. */
    public void add(int askedIndex, int score) {
        grow();
        indexes[size] = askedIndex;
        scores[size++] = score;
    }

    /** A host by name, with its score. */
    public void add(String host, int score) {
        grow();
        indexes[size] = -1;
        hosts[size] = host;
        scores[size++] = score;
    }

    @Override
    public HostPriority get(int index) {
        return new HostPriority(indexes[index] >= 0 ? asked.get(indexes[index]) : hosts[index], scores[index]);
    }

    @Override
    public int size() {
        return size;
    }

    public RequestedNames asked() {
        return asked;
    }

    /** The index in {@link #asked()} of entry {@code index}'s host, or -1 when it is held as a String. */
    public int askedIndex(int index) {
        return indexes[index];
    }

    public String host(int index) {
        return hosts[index];
    }

    public int score(int index) {
        return scores[index];
    }

    private void grow() {
        if (size == indexes.length) {
            indexes = Arrays.copyOf(indexes, size * 2);
            hosts = Arrays.copyOf(hosts, size * 2);
            scores = Arrays.copyOf(scores, size * 2);
        }
    }
}
