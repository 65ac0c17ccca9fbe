package io.hetgpu.extender.wire;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Node name -> why it was refused, in the order the nodes were judged: a filter answer's
 * {@code FailedNodes} or {@code FailedAndUnresolvableNodes}. Built once per answer and then only
 * written out, so it is two arrays rather than a hash table of thousands of entries; lookups by name
 * scan (tests use them, the wire does not). Whoever builds one puts each name once: a map, and the
 * answer's JSON object, hold each key once. A name that came as a request's bytes ({@link RequestedNames}) keeps its
 * index there, so that the answer copies those bytes instead of looking up the name's JSON form.
 */
public final class NodeReasons extends AbstractMap<String, String> {

    private final String[] names;
    private final String[] reasons;
    /** The request's names the entries may come from (null: none does). */
    private final RequestedNames requested;
    /** Per entry, its name's index in {@link #requested}, or -1. */
    private final int[] requestIndexes;
    private final int size;

    private NodeReasons(String[] names, String[] reasons, RequestedNames requested, int[] requestIndexes, int size) {
        this.names = names;
        this.reasons = reasons;
        this.requested = requested;
        this.requestIndexes = requestIndexes;
        this.size = size;
    }

    public static Builder builder(int expected) {
        return new Builder(expected, null);
    }

    /** A builder whose entries may name a node by its index in {@code requested}. */
    public static Builder builder(int expected, RequestedNames requested) {
        return new Builder(expected, requested);
    }

    public static final class Builder {
        private final RequestedNames requested;
        private String[] names;
        private String[] reasons;
        private int[] requestIndexes;
        private int size;

        private Builder(int expected, RequestedNames requested) {
            this.requested = requested;
            names = new String[Math.max(4, expected)];
            reasons = new String[names.length];
            requestIndexes = new int[names.length];
        }

        /** Adds a name not put before. */
        public Builder put(String name, String reason) {
            return put(name, reason, -1);
        }

        /** Adds a name not put before, which is the builder's requested name at {@code requestIndex} (-1: none). */
        public Builder put(String name, String reason, int requestIndex) {
            if (size == names.length) {
                names = Arrays.copyOf(names, size * 2);
                reasons = Arrays.copyOf(reasons, size * 2);
                requestIndexes = Arrays.copyOf(requestIndexes, size * 2);
            }
            names[size] = name;
            reasons[size] = reason;
            requestIndexes[size] = requested == null ? -1 : requestIndex;
            size++;
            return this;
        }

        public NodeReasons build() {
            return new NodeReasons(Arrays.copyOf(names, size), Arrays.copyOf(reasons, size), requested,
                    Arrays.copyOf(requestIndexes, size), size);
        }
    }

    /** The request's names that entries may come from, or null. */
    public RequestedNames requested() {
        return requested;
    }

    /** The index in {@link #requested()} of entry {@code entry}'s name, or -1 when it did not come from there. */
    public int requestIndex(int entry) {
        return requestIndexes[entry];
    }

    public String name(int entry) {
        return names[entry];
    }

    public String reason(int entry) {
        return reasons[entry];
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void forEach(BiConsumer<? super String, ? super String> action) {
        for (int i = 0; i < size; i++) {
            action.accept(names[i], reasons[i]);
        }
    }

    @Override
    public Set<Entry<String, String>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return size;
            }

            @Override
            public Iterator<Entry<String, String>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < size;
                    }

                    @Override
                    public Entry<String, String> next() {
                        if (next >= size) {
                            throw new NoSuchElementException();
                        }
                        int at = next++;
                        return Map.entry(names[at], reasons[at]);
                    }
                };
            }
        };
    }
}
