package io.hetgpu.gpu;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The symmetric matrix of links between a node's GPUs, by position in {@link NodeTopology#devices()}.
 * Immutable; pair scores are precomputed because the allocator reads them in its inner loop.
 */
public final class LinkMatrix {

    private final GpuLink[][] links;
    private final int[][] scores;

    private LinkMatrix(GpuLink[][] links) {
        this.links = links;
        this.scores = new int[links.length][links.length];
        for (int i = 0; i < links.length; i++) {
            for (int j = 0; j < links.length; j++) {
                scores[i][j] = i == j ? 0 : links[i][j].score();
            }
        }
    }

    /**
     * Builds a matrix from rows; the diagonal is ignored (may be null) and every other cell must be set and
     * equal to its mirror.
     */
    public static LinkMatrix of(List<List<GpuLink>> rows) {
        int n = rows.size();
        var cells = new GpuLink[n][n];
        for (int i = 0; i < n; i++) {
            var row = rows.get(i);
            if (row.size() != n) {
                throw new IllegalArgumentException("links[" + i + "] has " + row.size() + " entries, expected " + n);
            }
            for (int j = 0; j < n; j++) {
                cells[i][j] = i == j ? null : row.get(j);
                if (i != j && cells[i][j] == null) {
                    throw new IllegalArgumentException("links[" + i + "][" + j + "] is missing");
                }
            }
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if (!cells[i][j].equals(cells[j][i])) {
                    throw new IllegalArgumentException("links[" + i + "][" + j + "] is " + cells[i][j].token()
                            + " but links[" + j + "][" + i + "] is " + cells[j][i].token() + ": the matrix must be symmetric");
                }
            }
        }
        return new LinkMatrix(cells);
    }

    /** Starts a matrix of {@code size} devices in which every pair is joined by {@code fill}. */
    public static Builder builder(int size, GpuLink fill) {
        return new Builder(size, fill);
    }

    public int size() {
        return links.length;
    }

    /** The link between positions {@code i} and {@code j}; {@code i != j}. */
    public GpuLink link(int i, int j) {
        if (i == j) {
            throw new IllegalArgumentException("a device has no link to itself (position " + i + ")");
        }
        return links[i][j];
    }

    public int score(int i, int j) {
        return scores[i][j];
    }

    public boolean isNvlink(int i, int j) {
        return i != j && links[i][j].isNvlink();
    }

    /** Rows for serialisation and display; the diagonal is null. */
    public List<List<GpuLink>> rows() {
        var rows = new ArrayList<List<GpuLink>>(links.length);
        for (var row : links) {
            rows.add(java.util.Collections.unmodifiableList(Arrays.asList(row.clone())));
        }
        return List.copyOf(rows);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LinkMatrix that && Arrays.deepEquals(links, that.links);
    }

    @Override
    public int hashCode() {
        return Arrays.deepHashCode(links);
    }

    /** The matrix as {@code nvidia-smi topo -m} prints it. */
    @Override
    public String toString() {
        var text = new StringBuilder("     ");
        for (int j = 0; j < links.length; j++) {
            text.append(String.format("%-6s", "G" + j));
        }
        for (int i = 0; i < links.length; i++) {
            text.append(String.format("%n%-5s", "G" + i));
            for (int j = 0; j < links.length; j++) {
                text.append(String.format("%-6s", i == j ? "X" : links[i][j].token()));
            }
        }
        return text.toString();
    }

    /** Mutable only while building; {@link #build()} checks nothing is left unset. */
    public static final class Builder {
        private final GpuLink[][] cells;

        private Builder(int size, GpuLink fill) {
            cells = new GpuLink[size][size];
            for (var row : cells) {
                Arrays.fill(row, fill);
            }
        }

        /** Sets both directions of one pair. */
        public Builder set(int i, int j, GpuLink link) {
            if (i == j) {
                throw new IllegalArgumentException("a device has no link to itself (position " + i + ")");
            }
            cells[i][j] = link;
            cells[j][i] = link;
            return this;
        }

        public LinkMatrix build() {
            var rows = new ArrayList<List<GpuLink>>();
            for (var row : cells) {
                rows.add(Arrays.asList(row.clone()));
            }
            return LinkMatrix.of(rows);
        }
    }
}
