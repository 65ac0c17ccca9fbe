package io.hetgpu.gpu.profile;

import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads the link matrix from the output of {@code nvidia-smi topo -m}, pasted verbatim. What is not
 * GPU-to-GPU is skipped: the ANSI underline newer drivers put on the header, NIC rows and columns,
 * the CPU/NUMA affinity columns and the legend. Rows and columns may be labelled {@code GPU0} or
 * {@code G0}. Old drivers printed {@code SOC} for what is now {@code SYS}; both are read.
 */
final class TopoTable {

    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*m");
    private static final Pattern GPU_LABEL = Pattern.compile("G(?:PU)?(\\d{1,2})");

    private TopoTable() {
    }

    /** Parses {@code text}; problems are reported against {@code field} of {@code links}. */
    static LinkMatrix parse(String text, ProfileFields links, String field) throws ProfileFormatException {
        var lines = ANSI.matcher(text).replaceAll("").lines().map(String::strip).filter(line -> !line.isEmpty()).toList();
        if (lines.isEmpty() || !isGpuLabel(firstToken(lines.get(0)))) {
            throw links.failure(field, "expected the output of `nvidia-smi topo -m`, whose first line names the columns GPU0 GPU1 ...");
        }
        var columns = columns(lines.get(0), links, field);
        int n = columns.size();
        var rows = new ArrayList<List<GpuLink>>();
        for (var line : lines.subList(1, lines.size())) {
            var tokens = line.split("\\s+");
            if (!isGpuLabel(tokens[0])) {
                continue; // NIC rows and the legend
            }
            int row = rows.size();
            if (!tokens[0].equals(columns.get(row))) {
                throw links.failure(field, "expected row " + columns.get(row) + ", got \"" + tokens[0] + "\"");
            }
            if (tokens.length < n + 1) {
                throw links.failure(field, "row " + tokens[0] + " has " + (tokens.length - 1) + " entries, expected " + n);
            }
            var cells = new ArrayList<GpuLink>(n);
            for (int j = 0; j < n; j++) {
                cells.add(cell(tokens[j + 1], row, j, columns, links, field));
            }
            rows.add(cells);
            if (rows.size() == n) {
                break;
            }
        }
        if (rows.size() < n) {
            throw links.failure(field, "the header names " + n + " GPUs but the table has only " + rows.size() + " GPU rows");
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if (!rows.get(i).get(j).equals(rows.get(j).get(i))) {
                    throw links.failure(field, columns.get(i) + "->" + columns.get(j) + " is " + rows.get(i).get(j).token()
                            + " but " + columns.get(j) + "->" + columns.get(i) + " is " + rows.get(j).get(i).token()
                            + "; a link joins both ways");
                }
            }
        }
        return LinkMatrix.of(rows);
    }

    private static List<String> columns(String header, ProfileFields links, String field) throws ProfileFormatException {
        var columns = new ArrayList<String>();
        for (var token : header.split("\\s+")) {
            if (!isGpuLabel(token)) {
                break; // NIC0, mlx5_0, "CPU Affinity", ...
            }
            var expected = token.startsWith("GPU") ? "GPU" + columns.size() : "G" + columns.size();
            if (!token.equals(expected)) {
                throw links.failure(field, "expected column " + expected + " in the header, got \"" + token + "\"");
            }
            columns.add(token);
        }
        return columns;
    }

    private static GpuLink cell(String token, int i, int j, List<String> columns, ProfileFields links, String field)
            throws ProfileFormatException {
        var where = "row " + columns.get(i) + ", column " + columns.get(j);
        if (i == j) {
            if (!token.equals("X")) {
                throw links.failure(field, where + ": expected X (a GPU to itself), got \"" + token + "\"");
            }
            return null;
        }
        try {
            return GpuLink.parse(token.equals("SOC") ? "SYS" : token);
        } catch (IllegalArgumentException e) {
            throw links.failure(field, where + ": unknown link \"" + token + "\" (expected NV#, NVS#, BRD, PIX, PXB, PHB, NODE or SYS)");
        }
    }

    private static boolean isGpuLabel(String token) {
        return GPU_LABEL.matcher(token).matches();
    }

    private static String firstToken(String line) {
        return line.split("\\s+")[0];
    }
}
