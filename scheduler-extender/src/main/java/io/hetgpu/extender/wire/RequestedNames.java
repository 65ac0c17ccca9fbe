package io.hetgpu.extender.wire;

import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.IntFunction;

/**
 * A request's {@code NodeNames} as its bytes: each name the range of the request body between its quotes. A 5,000-name
 * request then costs no String per name: a name the extender knows is looked up by its bytes
 * ({@code NodeSnapshot.positionOf(byte[], int, int)}) and written back into the answer as the same bytes, which
 * kube-scheduler sent as JSON and so are JSON. A name is decoded into a String only when asked for ({@link #get}): one
 * the extender does not know, one with escapes or outside ASCII, a test's.
 */
public final class RequestedNames extends AbstractList<String> implements RandomAccess {

    private final byte[] body;
    /** The content of each name: from its opening quote + 1 to its closing quote. */
    private final int[] starts;
    private final int[] ends;
    /** Per name, whether its bytes are its characters (ASCII, no escape), so that bytes compare as the name would. */
    private final boolean[] plain;
    /** How many names: the arrays may be longer, as sized before the names were counted. */
    private final int size;
    /** Decodes the name of an index that is not plain (JSON escapes, UTF-8). */
    private final IntFunction<String> decoder;

    /** The first {@code size} entries of the arrays, which the list owns from now on. */
    public RequestedNames(byte[] body, int[] starts, int[] ends, boolean[] plain, int size, IntFunction<String> decoder) {
        if (size > starts.length || size > ends.length || size > plain.length) {
            throw new IllegalArgumentException("size " + size + " is past the arrays' lengths " + starts.length + ", " + ends.length
                    + ", " + plain.length);
        }
        this.body = body;
        this.starts = starts;
        this.ends = ends;
        this.plain = plain;
        this.size = size;
        this.decoder = decoder;
    }

    @Override
    public String get(int index) {
        Objects.checkIndex(index, size);
        return plain[index] ? new String(body, starts[index], ends[index] - starts[index], StandardCharsets.ISO_8859_1)
                : decoder.apply(index);
    }

    @Override
    public int size() {
        return size;
    }

    /** Whether the name's bytes are its characters, one each. */
    public boolean plain(int index) {
        return plain[index];
    }

    public byte[] body() {
        return body;
    }

    public int start(int index) {
        return starts[index];
    }

    public int end(int index) {
        return ends[index];
    }

    /** These names at these indexes, in that order: an answer's kept names, written back as their bytes. */
    public RequestedNames subset(int[] indexes, int count) {
        var subStarts = new int[count];
        var subEnds = new int[count];
        var subPlain = new boolean[count];
        for (int i = 0; i < count; i++) {
            subStarts[i] = starts[indexes[i]];
            subEnds[i] = ends[indexes[i]];
            subPlain[i] = plain[indexes[i]];
        }
        var map = Arrays.copyOf(indexes, count);
        return new RequestedNames(body, subStarts, subEnds, subPlain, count, i -> decoder.apply(map[i]));
    }
}
