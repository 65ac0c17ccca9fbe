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
 * answer's JSON object, hold each key once.
 */
public final class NodeReasons extends AbstractMap<String, String> {

    private final String[] names;
    private final String[] reasons;
    private final int size;

    private NodeReasons(String[] names, String[] reasons, int size) {
        this.names = names;
        this.reasons = reasons;
        this.size = size;
    }

    public static Builder builder(int expected) {
        return new Builder(expected);
    }

    public static final class Builder {
        private String[] names;
        private String[] reasons;
        private int size;

        private Builder(int expected) {
            names = new String[Math.max(4, expected)];
            reasons = new String[names.length];
        }

        /** Adds a name not put before. */
        public Builder put(String name, String reason) {
            if (size == names.length) {
                names = Arrays.copyOf(names, size * 2);
                reasons = Arrays.copyOf(reasons, size * 2);
            }
            names[size] = name;
            reasons[size] = reason;
            size++;
            return this;
        }

        public NodeReasons build() {
            return new NodeReasons(Arrays.copyOf(names, size), Arrays.copyOf(reasons, size), size);
        }
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
